package io.pglock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/** B10's report: one row (peers in the baseline column, pglock's queues in the pglock one), the table and notes. */
final class B10Report {
  private B10Report() {}

  /**
   * What one contender gave: its figures, or the error that stopped it (then burnDown and after may be
   * null), or why it was not run ({@link BurnDownContender#notRun}: no error, no figures).
   */
  record Outcome(String name, boolean peer, String settings, BurnDownContender.BurnDown burnDown, TableStats before,
      TableStats after, double prepareSeconds, String error, String notRun) {

    Outcome withError(String more) {
      return new Outcome(name, peer, settings, burnDown, before, after, prepareSeconds,
          error == null ? more : error + "; " + more, notRun);
    }

    /** {@return jobs/s, or empty if it failed} */
    Optional<Double> jobsPerSecond() {
      return burnDown == null || error != null ? Optional.empty() : Optional.of(burnDown.jobsPerSecond());
    }
  }

  /**
   * One system's wake-up on an idle queue: ms per sample from just before the enqueue call to the
   * handler's start ({@code wake}, infinite: timed out) and of the enqueue call itself ({@code call});
   * or why not ({@code notRun}, {@code error}: then both null).
   */
  record WakeUp(String name, double[] wake, double[] call, String notRun, String error) {
    boolean measured() {
      return wake != null && wake.length > 0;
    }

    double p(double p) {
      return LossLatency.percentile(wake, p);
    }

    String figure() {
      return measured() ? B11QueueLatencies.ms(p(0.5)) + " (p95 " + B11QueueLatencies.ms(p(0.95)) + ")"
          : notRun != null ? notRun : "error";
    }
  }

  static Report of(B10BurnDown b, int jobs, int workers, List<Outcome> outcomes) {
    return of(b, jobs, workers, outcomes, List.of());
  }

  static Report of(B10BurnDown b, int jobs, int workers, List<Outcome> outcomes, List<WakeUp> wakeUps) {
    return of(b, jobs, workers, outcomes, wakeUps, List.of());
  }

  /**
   * Each contender's median round (by jobs/s; the lower middle one of an even count), in the order
   * the contenders first ran; a failed or skipped round is the contender's figure if it has no other.
   */
  static List<Outcome> medians(List<Outcome> all) {
    java.util.Map<String, List<Outcome>> byName = byName(all);
    List<Outcome> medians = new ArrayList<>();
    for (List<Outcome> rounds : byName.values()) {
      List<Outcome> ok = rounds.stream().filter(o -> o.jobsPerSecond().isPresent())
          .sorted(Comparator.comparingDouble(o -> o.jobsPerSecond().get())).collect(Collectors.toList());
      if (ok.size() < rounds.size()) {
        // a failed round fails the contender: its error is what the report shows
        medians.add(rounds.stream().filter(o -> o.jobsPerSecond().isEmpty()).findFirst().get());
      } else {
        medians.add(ok.get((ok.size() - 1) / 2));
      }
    }
    return medians;
  }

  /** {@return the outcomes by contender, in the order the contenders first ran, each's rounds in order} */
  private static java.util.Map<String, List<Outcome>> byName(List<Outcome> all) {
    java.util.Map<String, List<Outcome>> byName = new java.util.LinkedHashMap<>();
    for (Outcome o : all) {
      byName.computeIfAbsent(o.name(), k -> new ArrayList<>()).add(o);
    }
    return byName;
  }

  /** {@return for each contender run in more than one round: every round's jobs/s and the median} */
  static List<String> roundNotes(List<Outcome> all) {
    java.util.Map<String, List<Outcome>> byName = byName(all);
    List<String> notes = new ArrayList<>();
    for (var e : byName.entrySet()) {
      if (e.getValue().size() > 1) {
        notes.add(Report.fmt("%s, jobs/s by round: %s", e.getKey(), e.getValue().stream()
            .map(o -> o.jobsPerSecond().map(v -> Report.fmt("%.0f", v)).orElse("error")).collect(Collectors.joining(", "))));
      }
    }
    // each round's ratio, its two burn-downs one right after the other: the machine's drift between
    // rounds (a third and more on a shared 2-CPU machine) cancels out of it
    List<Outcome> graphile = byName.getOrDefault(GraphileWorkerBurnDown.name(GraphileWorkerBurnDown.Mode.THROUGHPUT),
        List.of());
    for (String pglock : List.of(PglockBurnDown.ADVISORY, PglockBurnDown.LEASE)) {
      List<Outcome> p = byName.getOrDefault(pglock, List.of());
      if (p.size() > 1 && p.size() == graphile.size()) {
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < p.size(); i++) {
          if (p.get(i).jobsPerSecond().isPresent() && graphile.get(i).jobsPerSecond().isPresent()) {
            ratios.add(p.get(i).jobsPerSecond().get() / graphile.get(i).jobsPerSecond().get());
          }
        }
        List<Double> sorted = ratios.stream().sorted().collect(Collectors.toList());
        notes.add(Report.fmt("%s / graphile-worker's throughput settings, round by round: %s; median %s", pglock,
            ratios.stream().map(v -> Report.fmt("%.2fx", v)).collect(Collectors.joining(", ")),
            sorted.isEmpty() ? "-" : Report.fmt("%.2fx", sorted.get((sorted.size() - 1) / 2))));
      }
    }
    return notes;
  }

  static Report of(B10BurnDown b, int jobs, int workers, List<Outcome> outcomes, List<WakeUp> wakeUps,
      List<String> roundNotes) {
    Report r = new Report(b.id(), b.title());
    List<Outcome> peers = outcomes.stream().filter(Outcome::peer).collect(Collectors.toList());
    List<Outcome> pglock = outcomes.stream().filter(o -> !o.peer()).collect(Collectors.toList());
    Optional<Double> bestPeer = best(peers);
    Optional<Double> bestPglock = best(pglock);
    r.info(Report.fmt("jobs/s, %d no-op jobs queued beforehand, %d workers", jobs, workers), figures(peers),
        pglock.isEmpty() ? "no contender yet" : figures(pglock),
        bestPeer.isPresent() && bestPglock.isPresent() ? Report.fmt("%.2fx", bestPglock.get() / bestPeer.get()) : "-");
    Optional<Outcome> advisory = named(outcomes, PglockBurnDown.ADVISORY);
    Optional<Outcome> lease = named(outcomes, PglockBurnDown.LEASE);
    Optional<Outcome> graphile = named(outcomes, GraphileWorkerBurnDown.name(GraphileWorkerBurnDown.Mode.THROUGHPUT));
    Optional<Outcome> graphileDefaults = named(outcomes,
        GraphileWorkerBurnDown.name(GraphileWorkerBurnDown.Mode.DEFAULTS));
    if (advisory.isPresent()) {
      for (Outcome peer : peers) {
        if (peer.name().startsWith(GraphileWorker.name())) {
          continue; // goals of their own, below
        }
        goal(r, "jobs/s, pglock advisory / " + peer.name(), peer, advisory.get(), B10BurnDown.GOAL_OVER_PEERS);
      }
      if (graphile.isPresent()) {
        goal(r, "jobs/s, pglock advisory / " + graphile.get().name(), graphile.get(), advisory.get(),
            B10BurnDown.GOAL_OVER_GRAPHILE);
      }
      if (graphile.isPresent() && lease.isPresent()) {
        goal(r, "jobs/s, pglock lease / " + graphile.get().name(), graphile.get(), lease.get(),
            B10BurnDown.GOAL_LEASE_OVER_GRAPHILE);
      }
      if (graphileDefaults.isPresent()) {
        Outcome g = graphileDefaults.get();
        Optional<Double> gd = g.jobsPerSecond();
        Optional<Double> p = advisory.get().jobsPerSecond();
        r.info("jobs/s, pglock advisory / " + g.name(), g.notRun() != null ? g.notRun()
            : gd.map(v -> Report.fmt("%.0f/s", v)).orElse("error"), p.map(v -> Report.fmt("%.0f/s", v)).orElse("error"),
            gd.isPresent() && p.isPresent() ? Report.fmt("%.2fx", p.get() / gd.get()) : "-");
      }
      if (lease.isPresent()) {
        goal(r, "jobs/s, pglock advisory / its lease mode", lease.get(), advisory.get(), B10BurnDown.GOAL_OVER_LEASE);
      }
      Optional<Outcome> kept = named(outcomes, PglockBurnDown.ADVISORY_KEPT);
      if (kept.isPresent() && kept.get().jobsPerSecond().isPresent() && advisory.get().jobsPerSecond().isPresent()) {
        double k = kept.get().jobsPerSecond().get();
        double a = advisory.get().jobsPerSecond().get();
        r.info("jobs/s, pglock advisory keeping succeeded jobs (1 day) / deleting them", Report.fmt("%.0f/s", a),
            Report.fmt("%.0f/s", k), Report.fmt("%.2fx", k / a));
      }
    }
    if (!roundNotes.isEmpty()) {
      r.note("rounds: the contenders of the graphile-worker goals ran in %d rounds, each round's order one further"
          + " along, each after an unmeasured warm-up burn-down in its own process and a CHECKPOINT; the table and the"
          + " goals give each one's median round", roundCount(roundNotes.get(0)));
      roundNotes.forEach(n -> r.note("%s", n));
    }
    wakeUps(r, wakeUps);
    List<String[]> rows = new ArrayList<>();
    for (Outcome o : outcomes) {
      rows.add(row(o));
      if (o.error() != null) {
        r.errors.add(o.name() + ": " + o.error());
      }
    }
    for (String line : Report.render(new String[] {"system", "jobs/s", "burn-down", "first job", "last handled",
        "handled", "longest pause", Report.fmt("pauses >= %d ms", BurnDownProgress.PAUSE.toMillis()), "dead tuples", "rows left", "updates (HOT)", "deletes", "autovacuums", "size before", "size after",
        "prepare"}, rows).split("\n")) {
      r.note("%s", line);
    }
    r.note("jobs/s = jobs / burn-down; burn-down: from the call that starts the workers until the last job is"
        + " recorded done in the system's own tables (the no-op handler counts down a latch; once it reaches zero the"
        + " table is polled every 1 ms: db-scheduler's empty, JobRunr's all SUCCEEDED, pglock's queue without an"
        + " unfinished row, then checked all succeeded); first job, last handled: until the first and the last handler"
        + " call; handled: handler calls (more than the jobs: a job ran twice); pauses:"
        + " between two handler calls one after the other, workers idle while jobs waited (for a poll, typically), how"
        + " many and their total");
    r.note("tables: pg_stat_user_tables once the contender's sessions have ended (a backend's counts reach it when it"
        + " exits), estimates; rows left counted; updates, deletes and autovacuums during the burn-down (the counts"
        + " after the insert subtracted); size: pg_total_relation_size (heap, indexes, TOAST), before = after the"
        + " insert; ANALYZE ran after the insert; prepare (schema, insert, start-up objects) is not timed");
    if (!pglock.isEmpty()) {
      r.note("pglock's table %s is shared with every other user of the database (other queues, other test runs): its"
          + " figures are the whole table's, counted from a VACUUM just before the contender's insert (dead tuples, and"
          + " the counters since the insert, include whatever others did meanwhile); rows left count every queue's"
          + " rows, the contender's own included (deleted only at its close)", PglockBurnDown.TABLE);
    }
    r.note("contenders run one after the other, each with %d workers and a pool of %d connections; the peers in a"
        + " schema of their own, dropped afterwards (graphile-worker: a database of its own, %s, made with CREATE"
        + " DATABASE on the same server and dropped afterwards; its table figures are that database's); pglock on a"
        + " queue of its own in %s, its rows deleted afterwards", workers, B10BurnDown.poolSize(workers),
        GraphileWorker.databaseName("<settings>"), PglockBurnDown.TABLE);
    for (Outcome o : outcomes) {
      r.note("%s: %s", o.name(), o.settings());
    }
    return r;
  }

  /** The wake-up rows: graphile-worker's p50 (and p95) against pglock's, goal pglock's p50 at most graphile's. */
  private static void wakeUps(Report r, List<WakeUp> wakeUps) {
    if (wakeUps.isEmpty()) {
      return;
    }
    Optional<WakeUp> g = wakeUps.stream().filter(w -> w.name().startsWith(GraphileWorker.name())).findFirst();
    Optional<WakeUp> p = wakeUps.stream().filter(w -> w.name().startsWith("pglock")).findFirst();
    if (g.isEmpty() || p.isEmpty()) {
      return;
    }
    WakeUp gw = g.get();
    WakeUp pw = p.get();
    int n = pw.measured() ? pw.wake().length : gw.measured() ? gw.wake().length : 0;
    String measure = Report.fmt("wake-up on an idle queue, p50 of %d: pglock / graphile-worker", n);
    if (gw.notRun() != null) {
      r.info(measure, gw.notRun(), pw.figure(), "-");
    } else if (!gw.measured() || !pw.measured()) {
      r.rows.add(new Report.Row(r.id, measure, gw.figure(), pw.figure(), "-",
          Report.fmt("<= %.2fx", B10BurnDown.GOAL_WAKE_OVER_GRAPHILE), Report.Verdict.MISS));
    } else {
      r.atMost(measure, gw.figure(), pw.figure(), pw.p(0.5) / gw.p(0.5), B10BurnDown.GOAL_WAKE_OVER_GRAPHILE);
    }
    for (WakeUp w : wakeUps) {
      if (w.error() != null) {
        r.errors.add("wake-up, " + w.name() + ": " + w.error());
      }
      if (w.measured()) {
        long timedOut = Arrays.stream(w.wake()).filter(Double::isInfinite).count();
        r.note("wake-up, %s: ms p10/p25/p50/p75/p90/p95/p99/max %s / %s / %s / %s / %s / %s / %s / %s; the enqueue call"
            + " itself p50 %s; timed out (%s): %d", w.name(), B11QueueLatencies.ms(w.p(0.1)),
            B11QueueLatencies.ms(w.p(0.25)), B11QueueLatencies.ms(w.p(0.5)), B11QueueLatencies.ms(w.p(0.75)),
            B11QueueLatencies.ms(w.p(0.9)), B11QueueLatencies.ms(w.p(0.95)), B11QueueLatencies.ms(w.p(0.99)),
            B11QueueLatencies.ms(w.p(1.0)), B11QueueLatencies.ms(LossLatency.percentile(w.call(), 0.5)),
            B11QueueLatencies.WAKE_TIMEOUT, timedOut);
      }
    }
    r.note("wake-up: one worker waits on an empty queue; one job at a time is enqueued from the worker's own process on"
        + " a connection of its own (autocommit: the NOTIFY goes at the commit), %d unmeasured first, a random %d-%d ms"
        + " between samples; the figure is from just before the enqueue call to the handler's start, on one clock"
        + " (graphile-worker: performance.now() in its Node process, its database of its own, %s; pglock:"
        + " System.nanoTime() in this JVM, a queue of its own in %s); graphile-worker: run() at its defaults with"
        + " concurrentJobs = the workers (pollInterval 2 s, LISTEN on), SELECT graphile_worker.add_job(identifier,"
        + " payload); pglock: JobQueue.enqueue(), a worker with concurrency = the workers, the rest at its defaults"
        + " (advisory mode, LISTEN on, pollInterval 1 s); graphile-worker's run first, then pglock's",
        B11QueueLatencies.WARM_UP_SAMPLES, B11QueueLatencies.GAP_MIN_MILLIS, B11QueueLatencies.GAP_MAX_MILLIS,
        GraphileWorker.databaseName("wake"), PglockBurnDown.TABLE);
  }

  private static int roundCount(String note) {
    return note.substring(note.indexOf(": ") + 2).split(", ").length;
  }

  private static Optional<Double> best(List<Outcome> outcomes) {
    return outcomes.stream().filter(o -> o.burnDown() != null).map(o -> o.burnDown().jobsPerSecond())
        .max(Comparator.naturalOrder());
  }

  private static Optional<Outcome> named(List<Outcome> outcomes, String name) {
    return outcomes.stream().filter(o -> o.name().equals(name)).findFirst();
  }

  /** A goal row: {@code pglock}'s jobs/s over {@code baseline}'s at least {@code min}; a MISS if either failed. */
  private static void goal(Report r, String measure, Outcome baseline, Outcome pglock, double min) {
    if (baseline.notRun() != null) {
      r.info(measure, baseline.notRun(), pglock.jobsPerSecond().map(v -> Report.fmt("%.0f/s", v)).orElse("error"), "-");
      return;
    }
    Optional<Double> b = baseline.jobsPerSecond();
    Optional<Double> p = pglock.jobsPerSecond();
    if (b.isEmpty() || p.isEmpty()) {
      r.rows.add(new Report.Row(r.id, measure, b.map(v -> Report.fmt("%.0f/s", v)).orElse("error"),
          p.map(v -> Report.fmt("%.0f/s", v)).orElse("error"), "-", Report.fmt(">= %.2fx", min),
          Report.Verdict.MISS));
      return;
    }
    r.atLeast(measure, Report.fmt("%.0f/s", b.get()), Report.fmt("%.0f/s", p.get()), p.get() / b.get(), min);
  }

  private static String figures(List<Outcome> outcomes) {
    return outcomes.stream()
        .map(o -> o.name() + " " + (o.notRun() != null ? "not run" : o.burnDown() == null ? "error"
            : Report.fmt("%.0f/s", o.burnDown().jobsPerSecond())))
        .collect(Collectors.joining(", "));
  }

  private static String[] row(Outcome o) {
    BurnDownContender.BurnDown b = o.burnDown();
    TableStats t = o.after() == null || o.before() == null ? null : o.after().since(o.before());
    if (b == null) {
      return new String[] {o.name(), o.notRun() != null ? "not run" : "error", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"};
    }
    return new String[] {o.name(), Report.fmt("%.0f", b.jobsPerSecond()), seconds(b.done().toNanos()),
        seconds(b.firstHandled().toNanos()), seconds(b.lastHandled().toNanos()), Integer.toString(b.handled()),
        seconds(b.longestPause().toNanos()), Report.fmt("%d (%s)", b.pauses(), seconds(b.paused().toNanos())),
        t == null ? "-" : Long.toString(t.dead()), t == null ? "-" : Long.toString(t.rows()),
        t == null ? "-" : Report.fmt("%d (%d)", t.updates(), t.hotUpdates()), t == null ? "-" : Long.toString(t.deletes()),
        t == null ? "-" : Long.toString(t.autovacuums()), TableStats.mib(o.before().bytes()),
        t == null ? "-" : TableStats.mib(t.bytes()), Report.fmt("%.1f s", o.prepareSeconds())};
  }

  private static String seconds(long nanos) {
    return Report.fmt("%.3f s", nanos / 1e9);
  }
}
