package io.pglock.bench;

import io.pglock.LockHandle;
import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * B12: what recording lock names costs a workload of unique names: B1's cycle (1 thread, a new name
 * every cycle) and B2's (64 threads on {@code lockSessions(2)}, a random name of 1M every cycle),
 * each by a {@code PgLocks} whose schema records names (the baseline here is the one that does
 * not: its schema is one without pglock's objects, so it starts no recorder) against one whose
 * schema does ({@code pglock}, migrated first). The same harness and server, interleaved rounds.
 * Goals: recording costs at most 5% (1 thread: time per cycle <= 1.05x; 64 threads: cycles/s
 * >= 0.95x). Also shown: the rows the run added to {@code pglock.lock_name} (deleted afterwards).
 *
 * <p>The two sides run the same code but for the recorder, so the figure is the median of the
 * per-round ratios over <em>all</em> rounds (at least {@value #MIN_ROUNDS}, but for the short run): picking the rounds whose
 * baseline was fast, as the other benchmarks' quiet filter does against a slower peer, would favour
 * the baseline here by selection alone. The quiet figure is in the notes.
 */
final class B12NameRecording implements Benchmark {
  static final double GOAL_1_THREAD = 1.05;
  static final double GOAL_64_THREADS = 0.95;
  static final int THREADS = 64;
  static final long NAME_SPACE = 1_000_000;
  /** A schema without pglock's objects: a PgLocks on it records no names. */
  static final String NO_NAMES_SCHEMA = "pglock_b12_no_names";
  static final String NAMESPACE = "bench-b12";
  static final int MIN_ROUNDS = 20;
  /** With fewer {@code --trials} (the CI's short run), the rounds as given instead of at least {@value #MIN_ROUNDS}. */
  static final int SHORT_BELOW_TRIALS = 10;

  @Override
  public String id() {
    return "B12";
  }

  @Override
  public String title() {
    return "unique names, recording names vs not: B1's cycle (1 thread), B2's (64 threads, names of 1M)";
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    int version = PgLockSchema.migrate(db.simpleDataSource(), PgLockSchema.DEFAULT_SCHEMA);
    long ramp = Math.min(500_000_000L, o.roundNanos() / 4);
    String run = Long.toString(ThreadLocalRandom.current().nextLong(1L << 40, 1L << 50), 36);
    // the short run (--trials below 10, CI's) takes the rounds as given: it shows the benchmark runs
    int rounds = o.trials() < SHORT_BELOW_TRIALS ? Math.max(2, o.rounds()) : Math.max(MIN_ROUNDS, o.rounds());
    Report r = new Report(id(), title());
    long rowsBefore = rows(db);
    try {
      try (PgLocks plain = db.pgLocks("b12-1-none", b -> b.namespace(NAMESPACE).schema(NO_NAMES_SCHEMA));
          PgLocks recording = db.pgLocks("b12-1-names", b -> b.namespace(NAMESPACE))) {
        long started = System.nanoTime();
        AtomicLong next = new AtomicLong();
        Load.Cycle plainCycle = t -> cycle(plain, run + "-" + next.incrementAndGet());
        Load.Cycle recordingCycle = t -> cycle(recording, run + "-" + next.incrementAndGet());
        Rounds.Paired p = Rounds.interleave(rounds,
            () -> Load.run(1, ramp, o.roundNanos(), "b12-none", plainCycle).microsPerCycle(),
            () -> Load.run(1, ramp, o.roundNanos(), "b12-names", recordingCycle).microsPerCycle());
        Rounds.Paired q = p.quiet(true);
        r.atMost("cycle time, 1 thread, unique names", B1Uncontended.fmtUs(p.baselineMedian()) + " no names",
            B1Uncontended.fmtUs(p.pglockMedian()) + " names", p.ratio(), GOAL_1_THREAD);
        r.note("1 thread: %s (us per cycle)", p.detail("%.1f"));
        r.note("1 thread: %s", Rounds.summary(p, q, "%.1f us"));
        r.note("1 thread: %s", recorderCpu(db.nodeName("b12-1-names"), started));
      }
      try (PgLocks plain = db.pgLocks("b12-64-none",
              b -> b.namespace(NAMESPACE).schema(NO_NAMES_SCHEMA).lockSessions(B2ManyThreads.LOCK_SESSIONS));
          PgLocks recording = db.pgLocks("b12-64-names",
              b -> b.namespace(NAMESPACE).lockSessions(B2ManyThreads.LOCK_SESSIONS))) {
        long started = System.nanoTime();
        Load.Cycle plainCycle = t -> cycle(plain, run + "-r" + ThreadLocalRandom.current().nextLong(NAME_SPACE));
        Load.Cycle recordingCycle =
            t -> cycle(recording, run + "-r" + ThreadLocalRandom.current().nextLong(NAME_SPACE));
        Rounds.Paired p = Rounds.interleave(rounds,
            () -> Load.run(THREADS, ramp, o.roundNanos(), "b12-none", plainCycle).perSecond(),
            () -> Load.run(THREADS, ramp, o.roundNanos(), "b12-names", recordingCycle).perSecond());
        Rounds.Paired q = p.quiet(false);
        r.atLeast("cycles/s, 64 threads, names of 1M", Report.fmt("%,.0f/s no names", p.baselineMedian()),
            Report.fmt("%,.0f/s names", p.pglockMedian()), p.ratio(), GOAL_64_THREADS);
        r.note("64 threads: %s (cycles/s)", p.detail("%.0f"));
        r.note("64 threads: %s", Rounds.summary(p, q, "%,.0f/s"));
        r.note("64 threads: %s", recorderCpu(db.nodeName("b12-64-names"), started));
      }
      r.note("rows this run added to pglock.lock_name: %d (table: %d rows before the run); schema version %d",
          rows(db) - rowsBefore, rowsBefore, version);
    } finally {
      r.note("%s", deleteNames(db));
    }
    return r;
  }

  /**
   * The CPU time of the recording side's name thread ({@code pglock-<node>-names}) since it started,
   * against the wall time since then: a figure of the recorder's own cost that the noise of a shared
   * machine does not blur.
   */
  private static String recorderCpu(String node, long startedNanos) {
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals("pglock-" + node + "-names")) {
        long cpu = mx.getThreadCpuTime(t.getId());
        double wall = (System.nanoTime() - startedNanos) / 1e9;
        return Report.fmt("name recorder thread: %.1f ms of CPU over %.0f s (%.3f%% of one core)", cpu / 1e6, wall,
            cpu / 1e7 / wall);
      }
    }
    return "name recorder thread: not found";
  }

  /** One cycle: try-acquire the name, release it (a try that finds it taken counts too, as in B2). */
  private static void cycle(PgLocks locks, String name) {
    Optional<LockHandle> h = locks.lock(name).tryAcquire();
    h.ifPresent(LockHandle::close);
  }

  private static long rows(Db db) throws Exception {
    try (Connection c = db.connect(db.runPrefix + "-b12-count");
        PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pglock.lock_name");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Deletes the names of B12's namespace, so that runs do not pile them up. */
  private static String deleteNames(Db db) {
    try (Connection c = db.connect(db.runPrefix + "-b12-cleanup");
        PreparedStatement ps = c.prepareStatement("DELETE FROM pglock.lock_name WHERE namespace = ?")) {
      ps.setString(1, NAMESPACE);
      return "names of namespace " + NAMESPACE + " deleted: " + ps.executeUpdate();
    } catch (Exception e) {
      return "names of namespace " + NAMESPACE + " left in place (" + e.getMessage() + ")";
    }
  }
}
