package io.pglock.bench;

import io.pglock.LockKey;
import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;

/**
 * B7: the cost of the lock history. The same {@code run} cycle, acquire, empty work, release,
 * without history (baseline: {@code locks.lock(k).run(..)}) and with it (pglock:
 * {@code locks.lock(k).withHistory().run(..)}, which queues the hold's start and end for the
 * history writer's batches), on one {@code PgLocks} shared by both sides, 1 thread (mean time per
 * cycle), and as information 64 threads ({@code lockSessions(2)}; cycles per second; the writer's
 * batches then compete with the load for the server). Keys as in B6. The schema is installed
 * first; the history rows of this run are deleted at the end.
 */
final class B7History implements Benchmark {
  static final int THREADS = 64;
  static final int KEYS_PER_THREAD = 256;
  static final double GOAL_1_THREAD = 1.2;
  private static final Duration WAIT = Duration.ofSeconds(10);

  @Override
  public String id() {
    return "B7";
  }

  @Override
  public String title() {
    return "run(work) with vs without history: 1 thread (time per cycle), 64 threads (cycles/s)";
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    int version = PgLockSchema.migrate(db.simpleDataSource(), PgLockSchema.DEFAULT_SCHEMA);
    long ramp = Math.min(500_000_000L, o.roundNanos() / 4);
    Report r = new Report(id(), title());
    long plainBase = Benchmark.keyBase();
    long historyBase = plainBase + (long) THREADS * KEYS_PER_THREAD;
    try {
      try (PgLocks locks = db.pgLocks("b7-1", b -> b)) {
        Rounds.Paired p = Rounds.interleave(o.rounds(),
            () -> Load.run(1, ramp, o.roundNanos(), "b7-plain", cycles(locks, plainBase, false)).microsPerCycle(),
            () -> Load.run(1, ramp, o.roundNanos(), "b7-history", cycles(locks, historyBase, true)).microsPerCycle());
        Rounds.Paired q = p.quiet(true);
        r.atMost("run cycle time, 1 thread", B1Uncontended.fmtUs(q.baselineMedian()) + " no history",
            B1Uncontended.fmtUs(q.pglockMedian()) + " history", q.ratio(), GOAL_1_THREAD);
        r.note("1 thread: %s (us per cycle)", p.detail("%.1f"));
        r.note("1 thread: %s", Rounds.summary(p, q, "%.1f us"));
      }
      try (PgLocks locks = db.pgLocks("b7-64", b -> b.lockSessions(2))) {
        Rounds.Paired p = Rounds.interleave(o.rounds(),
            () -> Load.run(THREADS, ramp, o.roundNanos(), "b7-plain", cycles(locks, plainBase, false)).perSecond(),
            () -> Load.run(THREADS, ramp, o.roundNanos(), "b7-history", cycles(locks, historyBase, true)).perSecond());
        Rounds.Paired q = p.quiet(false);
        r.info("run cycles/s, 64 threads", Report.fmt("%,.0f/s no history", q.baselineMedian()),
            Report.fmt("%,.0f/s history", q.pglockMedian()), Report.fmt("%.2fx", q.ratio()));
        r.note("64 threads: %s (cycles/s)", p.detail("%.0f"));
      }
    } finally {
      r.note("schema version %d; %s", version, deleteHistory(db));
    }
    return r;
  }

  /** Each thread's cycle: run empty work under the next of its own keys. */
  private static Load.PerThread cycles(PgLocks locks, long base, boolean history) {
    return t -> {
      long first = base + (long) t * KEYS_PER_THREAD;
      int[] next = {0};
      return thread -> {
        long k = first + next[0];
        next[0] = (next[0] + 1) % KEYS_PER_THREAD;
        var lock = locks.lock(LockKey.of(k));
        (history ? lock.withHistory() : lock).run(WAIT, h -> null);
      };
    };
  }

  /** Deletes this run's history rows, so that runs do not pile them up. */
  private static String deleteHistory(Db db) {
    try (Connection c = db.connect(db.runPrefix + "-b7-cleanup");
        PreparedStatement ps = c.prepareStatement(
            "DELETE FROM " + PgLockSchema.DEFAULT_SCHEMA + ".lock_history WHERE node LIKE ?")) {
      ps.setString(1, db.runPrefix + "-b7-%");
      return "history rows of this run deleted: " + ps.executeUpdate();
    } catch (Exception e) {
      return "history rows of this run left in place (" + e.getMessage() + ")";
    }
  }
}
