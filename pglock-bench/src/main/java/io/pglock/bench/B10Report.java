package io.pglock.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/** B10's report: one row (peers in the baseline column, pglock's queues in the pglock one), the table and notes. */
final class B10Report {
  private B10Report() {}

  /** What one contender gave: its figures, or the error that stopped it (then burnDown and after may be null). */
  record Outcome(String name, boolean peer, String settings, BurnDownContender.BurnDown burnDown, TableStats before,
      TableStats after, double prepareSeconds, String error) {

    Outcome withError(String more) {
      return new Outcome(name, peer, settings, burnDown, before, after, prepareSeconds,
          error == null ? more : error + "; " + more);
    }

    /** {@return jobs/s, or empty if it failed} */
    Optional<Double> jobsPerSecond() {
      return burnDown == null || error != null ? Optional.empty() : Optional.of(burnDown.jobsPerSecond());
    }
  }

  static Report of(B10BurnDown b, int jobs, int workers, List<Outcome> outcomes) {
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
    if (advisory.isPresent()) {
      for (Outcome peer : peers) {
        goal(r, "jobs/s, pglock advisory / " + peer.name(), peer, advisory.get(), B10BurnDown.GOAL_OVER_PEERS);
      }
      if (lease.isPresent()) {
        goal(r, "jobs/s, pglock advisory / its lease mode", lease.get(), advisory.get(), B10BurnDown.GOAL_OVER_LEASE);
      }
    }
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
        + " schema of their own, dropped afterwards; pglock on a queue of its own in %s, its rows deleted afterwards",
        workers, B10BurnDown.poolSize(workers), PglockBurnDown.TABLE);
    for (Outcome o : outcomes) {
      r.note("%s: %s", o.name(), o.settings());
    }
    return r;
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
        .map(o -> o.name() + " " + (o.burnDown() == null ? "error" : Report.fmt("%.0f/s", o.burnDown().jobsPerSecond())))
        .collect(Collectors.joining(", "));
  }

  private static String[] row(Outcome o) {
    BurnDownContender.BurnDown b = o.burnDown();
    TableStats t = o.after() == null || o.before() == null ? null : o.after().since(o.before());
    if (b == null) {
      return new String[] {o.name(), "error", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"};
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
