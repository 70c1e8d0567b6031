package io.pglock.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.PgLocks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * B2: 64 threads, each cycle a random key out of 1M. Baseline: raw JDBC on a HikariCP pool of 8
 * (borrow, try-lock, unlock if taken, return). pglock: {@code lockSessions(2)}, try-acquire and
 * close. Figure: cycles per second (a try that finds the key taken also counts as a cycle, on both
 * sides; with 64 holders among 1M keys that is rare). Connections: pglock's {@code openSessions()}
 * and the peak seen in {@code pg_stat_activity} for this node's {@code pglock:...} sessions.
 */
final class B2ManyThreads implements Benchmark {
  static final int THREADS = 64;
  static final int POOL = 8;
  static final int LOCK_SESSIONS = 2;
  static final long KEY_SPACE = 1_000_000;
  static final double GOAL = 3.0;
  static final int MAX_CONNECTIONS = 2;

  @Override
  public String id() {
    return "B2";
  }

  @Override
  public String title() {
    return "64 threads, random keys of 1M, try-acquire + release, cycles/s";
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    long ramp = Math.min(500_000_000L, o.roundNanos() / 4);
    long base = Benchmark.keyBase();
    try (HikariDataSource pool = db.hikari("b2-raw", POOL);
        PgLocks locks = db.pgLocks("b2", b -> b.lockSessions(LOCK_SESSIONS));
        SessionWatcher pgSessions = new SessionWatcher(db, db.pglockPattern("b2"));
        SessionWatcher rawSessions = new SessionWatcher(db, db.runPrefix + "-b2-raw")) {
      Load.Cycle rawCycle = t -> {
        long k = base + ThreadLocalRandom.current().nextLong(KEY_SPACE);
        try (Connection c = pool.getConnection()) {
          boolean got;
          try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
            got = B1Uncontended.call(ps, k);
          }
          if (got) {
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_unlock(?)")) {
              if (!B1Uncontended.call(ps, k)) {
                throw new IllegalStateException("raw unlock of " + k + " returned false");
              }
            }
          }
        }
      };
      int[] maxOpen = {0};
      Load.Cycle pgCycle = t -> {
        long k = base + ThreadLocalRandom.current().nextLong(KEY_SPACE);
        Optional<LockHandle> h = locks.lock(LockKey.of(k)).tryAcquire();
        h.ifPresent(LockHandle::close);
        if (t == 0) {
          maxOpen[0] = Math.max(maxOpen[0], locks.openSessions());
        }
      };
      Rounds.Paired p = Rounds.interleave(o.rounds(),
          () -> Load.run(THREADS, ramp, o.roundNanos(), "b2-raw", rawCycle).perSecond(),
          () -> Load.run(THREADS, ramp, o.roundNanos(), "b2-pglock", pgCycle).perSecond());
      int seen = pgSessions.peak();
      Rounds.Paired q = p.quiet(false);
      Report r = new Report(id(), title());
      r.atLeast("cycles/s, 64 threads", Report.fmt("%,.0f/s (pool of %d)", q.baselineMedian(), POOL),
          Report.fmt("%,.0f/s", q.pglockMedian()), q.ratio(), GOAL);
      r.limit("connections used", Report.fmt("%d", rawSessions.peak()),
          Report.fmt("%d open, %d seen", maxOpen[0], seen), "<= " + MAX_CONNECTIONS,
          maxOpen[0] <= MAX_CONNECTIONS && seen <= MAX_CONNECTIONS);
      r.note("%s (cycles/s)", p.detail("%.0f"));
      r.note("%s", Rounds.summary(p, q, "%,.0f/s"));
      r.note("connections: pglock openSessions() peak %d, pg_stat_activity peak %d (application_name LIKE '%s'); "
          + "raw pool peak %d", maxOpen[0], seen, db.pglockPattern("b2"), rawSessions.peak());
      return r;
    }
  }
}
