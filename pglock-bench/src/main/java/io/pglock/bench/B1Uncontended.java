package io.pglock.bench;

import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.PgLocks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

/**
 * B1: one thread, uncontended acquire and release, a new key every cycle. Baseline: raw JDBC on one
 * connection, {@code SELECT pg_try_advisory_lock(?)} then {@code SELECT pg_advisory_unlock(?)},
 * prepared (two round trips). pglock: {@code lock(key).tryAcquire()} then {@code close()}, whose
 * release is asynchronous and can ride with the next try. Figure: mean time per cycle.
 */
final class B1Uncontended implements Benchmark {
  static final double GOAL = 0.6;

  @Override
  public String id() {
    return "B1";
  }

  @Override
  public String title() {
    return "one thread, uncontended try-acquire + release, mean time per cycle";
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    long ramp = Math.min(500_000_000L, o.roundNanos() / 4);
    long[] next = {Benchmark.keyBase()};
    try (Connection raw = db.connect(db.runPrefix + "-b1-raw");
        PreparedStatement tryLock = raw.prepareStatement("SELECT pg_try_advisory_lock(?)");
        PreparedStatement unlock = raw.prepareStatement("SELECT pg_advisory_unlock(?)");
        PgLocks locks = db.pgLocks("b1", b -> b)) {
      Load.Cycle rawCycle = t -> {
        long k = next[0]++;
        if (!call(tryLock, k)) {
          throw new IllegalStateException("raw try-lock of free key " + k + " failed");
        }
        if (!call(unlock, k)) {
          throw new IllegalStateException("raw unlock of " + k + " returned false");
        }
      };
      Load.Cycle pgCycle = t -> {
        long k = next[0]++;
        Optional<LockHandle> h = locks.lock(LockKey.of(k)).tryAcquire();
        if (h.isEmpty()) {
          throw new IllegalStateException("pglock try-acquire of free key " + k + " failed");
        }
        h.get().close();
      };
      Rounds.Paired p = Rounds.interleave(o.rounds(),
          () -> Load.run(1, ramp, o.roundNanos(), "b1-raw", rawCycle).microsPerCycle(),
          () -> Load.run(1, ramp, o.roundNanos(), "b1-pglock", pgCycle).microsPerCycle());
      Rounds.Paired q = p.quiet(true);
      Report r = new Report(id(), title());
      r.atMost("cycle time, 1 thread", fmtUs(q.baselineMedian()), fmtUs(q.pglockMedian()), q.ratio(), GOAL);
      r.note("%s (us per cycle)", p.detail("%.1f"));
      r.note("%s", Rounds.summary(p, q, "%.1f us"));
      r.note("pglock sessions open: %d", locks.openSessions());
      return r;
    }
  }

  static boolean call(PreparedStatement ps, long key) throws SQLException {
    ps.setLong(1, key);
    try (ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getBoolean(1);
    }
  }

  static String fmtUs(double us) {
    return Report.fmt("%.1f us", us);
  }
}
