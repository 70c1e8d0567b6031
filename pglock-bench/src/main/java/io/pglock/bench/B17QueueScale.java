package io.pglock.bench;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobRequest;
import java.io.File;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * B17: the queue at scale. One queue worked by 1, 2, 4 and 8 worker JVMs at once ({@link
 * ScaleWorkerMain}: one worker each, {@code concurrency(8)}, the rest at its defaults), on a job table
 * that already holds {@code finished} succeeded jobs of that queue, finished two days ago, so that each
 * worker's pruning (every minute, a day's retention) has work while the jobs run: the figure must not
 * depend on an empty table. For each fleet size: the JVMs start, burn down an unmeasured warm-up on a
 * queue of their own, then {@code jobs} no-op jobs queued beforehand on the big queue; jobs/s from the
 * RUN command to the last job recorded done. Then the table's live and dead rows and size.
 *
 * <p>The table is a schema of the run's own ({@code pglock_b17_<pid>}), filled with {@code INSERT ..
 * SELECT generate_series} and dropped at the end. Judged: every job ran and succeeded, once (a job
 * run twice or lost fails the run); the curve itself is informational.
 */
final class B17QueueScale implements Benchmark {
  static final int[] FLEETS = {1, 2, 4, 8};
  static final int CONCURRENCY = 8;
  static final long FULL_FINISHED = 10_000_000;
  static final long SHORT_FINISHED = 100_000;
  static final int FULL_JOBS = 100_000;
  static final int SHORT_JOBS = 5_000;
  static final int SHORT_BELOW_TRIALS = 10;
  static final Duration START = Duration.ofSeconds(60);
  static final Duration STALL = Duration.ofSeconds(60);
  /** The sustained part's length in the full run ({@code -Dpglock.b17.sustainMinutes} sets it; 0: skipped). */
  static final int SUSTAIN_MINUTES = 10;
  /** The sustained part's enqueue rate, jobs/s, in batches every {@value #SUSTAIN_TICK_MILLIS} ms. */
  static final int SUSTAIN_RATE = 2_000;
  static final int SUSTAIN_TICK_MILLIS = 100;
  /** The sustained part's workers' retention: short, so that pruning has work within the run. */
  static final Duration SUSTAIN_RETENTION = Duration.ofMinutes(2);
  static final int SUSTAIN_JVMS = 2;
  static final Duration SAMPLE_EVERY = Duration.ofSeconds(30);
  /**
   * After the sustained part's last job and its retention, this long with no new job: the last
   * pruning round (within a minute) and a vacuum after it (a check every 10 s, at most one a minute).
   */
  static final Duration SETTLE = Duration.ofMinutes(3);

  @Override
  public String id() {
    return "B17";
  }

  @Override
  public String title() {
    return "the queue at scale: 1, 2, 4 and 8 worker JVMs on one queue, with millions of finished jobs in the table";
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    boolean full = o.trials() >= SHORT_BELOW_TRIALS;
    long finished = Long.getLong("pglock.b17.finished", full ? FULL_FINISHED : SHORT_FINISHED);
    int jobs = o.b10Jobs() > 0 ? o.b10Jobs() : full ? FULL_JOBS : SHORT_JOBS;
    String schema = "pglock_b17_" + ProcessHandle.current().pid();
    String table = schema + ".job";
    String queue = "b17";
    Report r = new Report(id(), title());
    File dir = Files.createTempDirectory("pglock-b17").toFile();
    File log = new File(dir, "workers.log");
    try (Connection c = db.connect(db.runPrefix + "-b17")) {
      PgLockSchema.migrate(db.simpleDataSource(), schema);
      long t = System.nanoTime();
      System.out.printf("  filling %s with %,d finished jobs ...", table, finished);
      System.out.flush();
      try (Statement s = c.createStatement()) {
        // two days old: past the workers' retention (a day), so their pruning deletes them as they run
        s.execute("INSERT INTO " + table + " (queue, kind, payload, state, attempt, max_attempts, node, created_at,"
            + " started_at, finished_at) SELECT '" + queue + "', '" + ScaleWorkerMain.KIND + "', to_jsonb(g), 'succeeded',"
            + " 1, 25, 'b17-fill', now() - interval '2 days', now() - interval '2 days',"
            + " now() - interval '2 days' + g * interval '1 millisecond' FROM generate_series(1, " + finished + ") g");
        s.execute("VACUUM ANALYZE " + table);
      }
      double fill = (System.nanoTime() - t) / 1e9;
      System.out.printf(" %.0f s, %s%n", fill, TableStats.mib(TableStats.of(c, List.of(table)).bytes()));
      r.note("table %s: %,d succeeded jobs of queue %s finished two days ago, inserted in %.0f s (%s), vacuumed and"
          + " analysed before the first fleet", table, finished, queue, fill,
          TableStats.mib(TableStats.of(c, List.of(table)).bytes()));
      List<String[]> rows = new ArrayList<>();
      double one = 0;
      for (int k : FLEETS) {
        double perSecond = fleet(db, c, schema, queue, k, jobs, log, rows);
        one = k == 1 ? perSecond : one;
        r.info(Report.fmt("jobs/s, %d no-op jobs, %d worker JVM%s x %d threads, %,d finished jobs in the table", jobs,
            k, k == 1 ? "" : "s", CONCURRENCY, finished), k == 1 ? "-" : Report.fmt("1 JVM %.0f/s", one),
            Report.fmt("%.0f/s", perSecond), k == 1 ? "-" : Report.fmt("%.2fx", perSecond / one));
      }
      for (String line : Report.render(new String[] {"JVMs", "jobs/s", "burn-down", "finished by each JVM",
          "live rows after", "dead rows after", "deleted (pruned)", "size after"}, rows).split("\n")) {
        r.note("%s", line);
      }
      r.limit("every job ran once and succeeded, at every fleet size", "-", "yes", "all, once", true);
      int minutes = Integer.getInteger("pglock.b17.sustainMinutes", full ? SUSTAIN_MINUTES : 0);
      if (minutes > 0) {
        sustained(db, c, schema, minutes, log, r);
      }
      r.note("workers: ScaleWorkerMain JVMs (-XX:+UseSerialGC -Xmx256m, full JIT), each JobQueue.builder(PgLocks on an"
          + " unpooled PGSimpleDataSource).build().worker(queue).concurrency(%d), the rest at its defaults (advisory,"
          + " one session, LISTEN on, retention 1 day: succeeded jobs kept, those two days old pruned, 500 at a time,"
          + " every minute, by each JVM); each fleet first burns down %d warm-up jobs on a queue of its own; then"
          + " %d jobs enqueued with enqueueAll beforehand, a CHECKPOINT, and the clock from the RUN command to the last"
          + " job recorded done (polled every 1 ms); the fleet then stops (STOP, LEAVE)", CONCURRENCY, jobs / 5, jobs);
    } finally {
      try (Connection c = db.connect(db.runPrefix + "-b17-drop"); Statement s = c.createStatement()) {
        s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
      }
      if (r.errors.isEmpty()) {
        B8Failover.deleteTree(dir.toPath());
      } else {
        r.note("workers' stderr kept in %s", log);
      }
    }
    return r;
  }

  /**
   * The sustained part: {@value #SUSTAIN_JVMS} worker JVMs with a retention of {@link #SUSTAIN_RETENTION}
   * on a queue of its own while this JVM enqueues {@value #SUSTAIN_RATE} jobs a second for
   * {@code minutes}, then the retention and {@link #SETTLE} more with no new job: every
   * {@link #SAMPLE_EVERY} the queue's rows by state, the table's rows, dead rows, size and vacuums.
   * Goals: no job waits at the end, and the succeeded rows the queue keeps stay near what its
   * retention holds (rate x (retention + 90 s) at most while jobs come: a round of pruning every minute
   * or so; none finished more than the retention and 80 s before the end); the dead rows the run
   * left are vacuumed away, and the table's size levels off (over the second half of the enqueuing no
   * more than a tenth above its size at the middle): the space of the pruned rows is reused.
   */
  private static void sustained(Db db, Connection c, String schema, int minutes, File log, Report r) throws Exception {
    String table = schema + ".job";
    String queue = "b17-steady";
    FleetEvents events = new FleetEvents();
    List<Contender> fleet = new ArrayList<>();
    List<String[]> samples = new ArrayList<>();
    System.out.printf("  sustained: %d JVMs, %d jobs/s for %d min, retention %s ...%n", SUSTAIN_JVMS, SUSTAIN_RATE,
        minutes, SUSTAIN_RETENTION);
    long enqueued = 0;
    long maxKept = 0;
    try (PgLocks locks = PgLocks.builder(db.simpleDataSource()).schema(schema).namespace(ScaleWorkerMain.NAMESPACE)
        .nodeName(db.nodeName("b17-steady-enqueue")).build();
        JobQueue q = JobQueue.builder(locks).build()) {
      for (int i = 0; i < SUSTAIN_JVMS; i++) {
        String node = db.nodeName("b17-steady-" + i);
        fleet.add(Contender.start(ScaleWorkerMain.class, List.of("-XX:+UseSerialGC", "-Xms64m", "-Xmx256m"), node,
            List.of("url=" + db.options().url(), "user=" + db.options().user(), "node=" + node, "schema=" + schema,
                "concurrency=" + CONCURRENCY), db.options().password(), log, events));
      }
      await(events, fleet, "READY", 0, START, log);
      int mark = events.mark();
      for (Contender w : fleet) {
        w.send("RUN " + queue + " " + SUSTAIN_RETENTION.toSeconds());
      }
      await(events, fleet, "RUNNING", mark, START, log);
      long t0 = System.nanoTime();
      java.sql.Timestamp started = new java.sql.Timestamp(System.currentTimeMillis() - 60_000); // clock margin
      long steadyEnd = t0 + Duration.ofMinutes(minutes).toNanos();
      long end = steadyEnd + SUSTAIN_RETENTION.toNanos() + SETTLE.toNanos();
      long firstBytes = -1;
      long peakBytes = 0;
      long midBytes = -1; // at the middle of the enqueuing
      long lateBytes = 0; // the most over its second half
      long peakDead = 0;
      long vacuumsBefore = vacuums(c, table);
      long nextSample = t0;
      long nextTick = t0;
      int perTick = SUSTAIN_RATE * SUSTAIN_TICK_MILLIS / 1000;
      while (System.nanoTime() - end < 0) {
        long now = System.nanoTime();
        if (now - steadyEnd < 0 && now - nextTick >= 0) {
          List<JobRequest> batch = new ArrayList<>(perTick);
          for (int i = 0; i < perTick; i++) {
            batch.add(JobRequest.of(ScaleWorkerMain.KIND, i).queue(queue));
          }
          q.enqueueAll(batch);
          enqueued += perTick;
          nextTick += SUSTAIN_TICK_MILLIS * 1_000_000L;
        }
        if (now - nextSample >= 0) {
          long[] st = states(c, table, queue, started);
          TableStats t = TableStats.of(c, List.of(table));
          boolean steady = now - steadyEnd < 0;
          firstBytes = firstBytes < 0 ? t.bytes() : firstBytes;
          peakBytes = Math.max(peakBytes, t.bytes());
          if (steady && now - t0 >= (steadyEnd - t0) / 2) {
            midBytes = midBytes < 0 ? t.bytes() : midBytes;
            lateBytes = Math.max(lateBytes, t.bytes());
          }
          peakDead = Math.max(peakDead, t.dead());
          samples.add(new String[] {Report.fmt("%.1f", (now - t0) / 60e9), steady ? "enqueuing" : "draining",
              Report.fmt("%,d", enqueued), Report.fmt("%,d", st[0]), Report.fmt("%,d", st[1]),
              Report.fmt("%,d", t.rows()), Report.fmt("%,d", t.dead()), TableStats.mib(t.bytes()),
              Long.toString(vacuums(c, table) - vacuumsBefore)});
          if (steady && now - t0 > SUSTAIN_RETENTION.toNanos() + Duration.ofMinutes(1).toNanos()) {
            maxKept = Math.max(maxKept, st[1]);
          }
          nextSample += SAMPLE_EVERY.toNanos();
        }
        Thread.sleep(Math.max(1, Math.min((nextTick - System.nanoTime()) / 1_000_000, 50)));
      }
      long[] last = states(c, table, queue, started);
      long oldKept = oldSucceeded(c, table, queue, started);
      TableStats endStats = TableStats.of(c, List.of(table));
      for (String line : Report.render(new String[] {"minute", "phase", "enqueued", "waiting or running",
          "succeeded kept", "live rows (table)", "dead rows (table)", "size (table)", "vacuums"}, samples).split("\n")) {
        r.note("%s", line);
      }
      // a row is pruned at the first round after its retention: rounds come every 48-72 s when not behind
      long bound = SUSTAIN_RATE * (SUSTAIN_RETENTION.toSeconds() + 90);
      r.limit(Report.fmt("sustained %d min at %d jobs/s: succeeded rows kept, most after the first retention + 1 min",
          minutes, SUSTAIN_RATE), Report.fmt("<= %,d (rate x (retention + 90 s))", bound),
          Report.fmt("%,d", maxKept), Report.fmt("<= %,d", bound), maxKept <= bound);
      r.limit("sustained: jobs waiting at the end; succeeded rows past the retention", "0; 0",
          Report.fmt("%,d; %,d", last[0], oldKept), "0; 0", last[0] == 0 && oldKept == 0);
      // with autovacuum off (as on this server) the workers vacuum the table once its dead rows pass
      // 10,000 and a tenth of its live rows: after the drain, the last round's dead rows are gone
      long deadBound = 10_000 + endStats.rows() / 10;
      r.limit(Report.fmt("sustained: the table's dead rows at the end (peak %,d during the run)", peakDead),
          Report.fmt("<= %,d (10,000 + a tenth of the %,d live rows)", deadBound, endStats.rows()), Report.fmt("%,d", endStats.dead()),
          Report.fmt("<= %,d", deadBound), endStats.dead() <= deadBound);
      // the size levels off once the retention's worth of rows is kept: over the second half of the
      // enqueuing, the pruned rows' space is reused (judged when the middle is past the retention and
      // the minute pruning may lag)
      boolean judged = Duration.ofMinutes(minutes).dividedBy(2).compareTo(SUSTAIN_RETENTION.plusSeconds(90)) >= 0;
      long sizeBound = midBytes + midBytes / 10;
      r.limit("sustained: the table's largest size over the second half of the enqueuing",
          Report.fmt("<= its size at the middle + a tenth (%s)", TableStats.mib(midBytes)), TableStats.mib(lateBytes),
          judged ? "<= " + TableStats.mib(sizeBound) : "- (too short)", !judged || lateBytes <= sizeBound);
      r.info(Report.fmt("sustained: the table's size at the end, after the drain (largest during the run %s, at"
          + " the first sample %s)", TableStats.mib(peakBytes), TableStats.mib(firstBytes)), "-",
          TableStats.mib(endStats.bytes()), "-");
      r.note("sustained: %d ScaleWorkerMain JVMs on queue %s, retention(%s), the rest as above; this JVM enqueues %d"
          + " jobs every %d ms (enqueueAll) for %d min, then nothing for the retention and %s more; a sample every"
          + " %s (the table's figures include the fill's queue: its dead rows and size; vacuums: VACUUMs of the"
          + " table since the part began, the workers' own while autovacuum is off)", SUSTAIN_JVMS, queue,
          SUSTAIN_RETENTION, perTick, SUSTAIN_TICK_MILLIS, minutes, SETTLE, SAMPLE_EVERY);
    } finally {
      Contender.stopAll(fleet);
    }
  }

  /** {@return how many times the table was vacuumed, by hand or by autovacuum} */
  private static long vacuums(Connection c, String table) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_stat_get_vacuum_count(to_regclass(?))"
        + " + pg_stat_get_autovacuum_count(to_regclass(?))")) {
      ps.setString(1, table);
      ps.setString(2, table);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * {@return the queue's rows waiting or running, and succeeded since {@code since}} Each through its
   * partial index (the fill's 10,000,000 succeeded rows finished two days before {@code since}).
   */
  private static long[] states(Connection c, String table, String queue, java.sql.Timestamp since)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT (SELECT count(*) FROM " + table + " WHERE queue = ? AND"
        + " state IN ('available', 'retryable')) + (SELECT count(*) FROM " + table + " WHERE queue = ? AND"
        + " state = 'running'), (SELECT count(*) FROM " + table + " WHERE queue = ? AND state = 'succeeded'"
        + " AND finished_at >= ?)")) {
      ps.setString(1, queue);
      ps.setString(2, queue);
      ps.setString(3, queue);
      ps.setTimestamp(4, since);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new long[] {rs.getLong(1), rs.getLong(2)};
      }
    }
  }

  /** {@return the queue's succeeded rows finished longer ago than the retention and a pruning round (80 s) more} */
  private static long oldSucceeded(Connection c, String table, String queue, java.sql.Timestamp since)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + table + " WHERE queue = ?"
        + " AND state = 'succeeded' AND finished_at >= ? AND finished_at < now() - ? * interval '1 second'")) {
      ps.setString(1, queue);
      ps.setTimestamp(2, since);
      ps.setLong(3, SUSTAIN_RETENTION.toSeconds() + 80);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** One fleet of {@code k} JVMs: warm-up, then the measured burn-down; adds its table row. @return jobs/s */
  private static double fleet(Db db, Connection c, String schema, String queue, int k, int jobs, File log,
      List<String[]> rows) throws Exception {
    String table = schema + ".job";
    FleetEvents events = new FleetEvents();
    List<Contender> fleet = new ArrayList<>();
    System.out.printf("  %d JVM%s: start ...", k, k == 1 ? "" : "s");
    System.out.flush();
    try {
      for (int i = 0; i < k; i++) {
        String node = db.nodeName("b17-" + k + "-" + i);
        List<String> args = List.of("url=" + db.options().url(), "user=" + db.options().user(), "node=" + node,
            "schema=" + schema, "concurrency=" + CONCURRENCY);
        fleet.add(Contender.start(ScaleWorkerMain.class, List.of("-XX:+UseSerialGC", "-Xms64m", "-Xmx256m"), node,
            args, db.options().password(), log, events));
      }
      await(events, fleet, "READY", 0, START, log);
      String warm = queue + "-warm-" + k;
      enqueue(db, schema, warm, jobs / 5);
      burnDown(c, events, fleet, table, warm, log);
      stop(events, fleet, log);
      enqueue(db, schema, queue, jobs);
      try (Statement s = c.createStatement()) {
        s.execute("CHECKPOINT");
      }
      TableStats before = TableStats.of(c, List.of(table));
      System.out.print(" burn-down ...");
      System.out.flush();
      long t0 = System.nanoTime();
      burnDown(c, events, fleet, table, queue, log);
      double seconds = (System.nanoTime() - t0) / 1e9;
      List<FleetEvent> stopped = stop(events, fleet, log);
      long total = 0;
      List<String> each = new ArrayList<>();
      for (FleetEvent e : stopped) {
        long n = Long.parseLong(e.detail().trim());
        total += n;
        each.add(Long.toString(n));
      }
      check(c, table, queue, db.nodeName("b17-" + k + "-") + "%", jobs, total);
      TableStats after = TableStats.of(c, List.of(table)).since(before);
      double perSecond = jobs / seconds;
      System.out.printf(" %.2f s, %.0f jobs/s%n", seconds, perSecond);
      rows.add(new String[] {Integer.toString(k), Report.fmt("%.0f", perSecond), Report.fmt("%.3f s", seconds),
          String.join(" / ", each), Report.fmt("%,d", after.rows()), Report.fmt("%,d", after.dead()),
          Report.fmt("%,d", after.deletes()), TableStats.mib(after.bytes())});
      return perSecond;
    } finally {
      Contender.stopAll(fleet);
    }
  }

  private static void enqueue(Db db, String schema, String queue, int n) throws Exception {
    try (PgLocks locks = PgLocks.builder(db.simpleDataSource()).schema(schema).namespace(ScaleWorkerMain.NAMESPACE)
        .nodeName(db.nodeName("b17-enqueue")).build();
        JobQueue q = JobQueue.builder(locks).build()) {
      List<JobRequest> batch = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        batch.add(JobRequest.of(ScaleWorkerMain.KIND, i).queue(queue));
        if (batch.size() == 1_000 || i == n - 1) {
          q.enqueueAll(batch);
          batch.clear();
        }
      }
    }
  }

  /** RUN on every JVM, then waits until the queue has no unfinished row (a stall of {@link #STALL} fails). */
  private static void burnDown(Connection c, FleetEvents events, List<Contender> fleet, String table, String queue,
      File log) throws Exception {
    int mark = events.mark();
    for (Contender w : fleet) {
      w.send("RUN " + queue);
    }
    await(events, fleet, "RUNNING", mark, START, log);
    long last = -1;
    long since = System.nanoTime();
    long nextCount = since;
    // each condition on its own, so that each reads its partial index (job_available, job_running): one
    // condition for both states matches neither index, and the server then scans the whole table
    String waiting = " FROM " + table + " WHERE queue = ? AND state IN ('available', 'retryable')";
    String running = " FROM " + table + " WHERE queue = ? AND state = 'running'";
    try (PreparedStatement any = c.prepareStatement("SELECT EXISTS (SELECT 1" + waiting + ") OR EXISTS (SELECT 1"
        + running + ")");
        PreparedStatement count = c.prepareStatement("SELECT (SELECT count(*)" + waiting + ") + (SELECT count(*)"
            + running + ")")) {
      any.setString(1, queue);
      any.setString(2, queue);
      count.setString(1, queue);
      count.setString(2, queue);
      while (true) {
        try (ResultSet rs = any.executeQuery()) {
          rs.next();
          if (!rs.getBoolean(1)) {
            return;
          }
        }
        if (System.nanoTime() - nextCount >= 0) { // the stall check, once a second
          nextCount = System.nanoTime() + 1_000_000_000L;
          long left;
          try (ResultSet rs = count.executeQuery()) {
            rs.next();
            left = rs.getLong(1);
          }
          if (left != last) {
            last = left;
            since = System.nanoTime();
          } else if (System.nanoTime() - since > STALL.toNanos()) {
            throw new IllegalStateException(left + " jobs of queue " + queue + " unfinished for " + STALL
                + "; stderr in " + log);
          }
        }
        Thread.sleep(1);
      }
    }
  }

  private static List<FleetEvent> stop(FleetEvents events, List<Contender> fleet, File log) throws Exception {
    int mark = events.mark();
    for (Contender w : fleet) {
      w.send("STOP");
    }
    return await(events, fleet, "STOPPED", mark, START, log);
  }

  /** Waits for the event from every JVM of the fleet; throws at an ERROR, an exit, or the timeout. */
  private static List<FleetEvent> await(FleetEvents events, List<Contender> fleet, String kind, int from,
      Duration timeout, File log) throws Exception {
    List<FleetEvent> got = new ArrayList<>();
    long deadline = System.nanoTime() + timeout.toNanos();
    for (Contender w : fleet) {
      FleetEvent e = events.await(from, ev -> ev.who() == w && (ev.is(kind) || ev.is("ERROR") || ev.is("EXITED")),
          deadline).orElse(null);
      if (e == null || !e.is(kind)) {
        throw new IllegalStateException("worker JVM " + w.node + ": no " + kind + " within " + timeout
            + (e == null ? "" : ", " + e.kind() + " " + e.detail()) + "; stderr in " + log);
      }
      got.add(e);
    }
    return got;
  }

  /**
   * Every job of the burn-down succeeded at its first attempt on one of the fleet's nodes, and the
   * fleet finished exactly as many attempts: none lost, none run twice.
   */
  private static void check(Connection c, String table, String queue, String nodes, int jobs, long finishedByWorkers)
      throws SQLException {
    // this fleet's jobs: run by its nodes (the fill's rows, and earlier fleets', by others)
    try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FILTER (WHERE attempt = 1), count(*) FROM " + table
        + " WHERE queue = ? AND state = 'succeeded' AND node LIKE ?")) {
      ps.setString(1, queue);
      ps.setString(2, nodes);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (rs.getLong(2) != jobs || rs.getLong(1) != jobs || finishedByWorkers != jobs) {
          throw new IllegalStateException(Report.fmt("queue %s: %d jobs, %d succeeded (%d at their first attempt),"
              + " the workers finished %d", queue, jobs, rs.getLong(2), rs.getLong(1), finishedByWorkers));
        }
      }
    }
  }
}
