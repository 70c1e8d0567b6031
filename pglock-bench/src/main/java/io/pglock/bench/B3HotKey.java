package io.pglock.bench;

import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.PgLocks;
import io.pglock.SessionLock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;

/**
 * B3: one hot key, 8 threads each looping lock (waiting) then unlock. Figure: handoffs per second
 * (acquisitions of the key, all threads together). Baseline: raw JDBC, 8 connections, blocking
 * {@code pg_advisory_lock} then {@code pg_advisory_unlock}. pglock: one {@code PgLocks} shared by the
 * 8 threads ({@code acquire()} then {@code close()}), where a release hands the lock to a local
 * waiter up to {@code maxLocalHandoffs} times in a row. Informational variant: 8 {@code PgLocks}, one
 * per thread, like 8 processes, where every handoff goes through the server.
 */
final class B3HotKey implements Benchmark {
  static final int THREADS = 8;
  static final double GOAL = 1.0;

  @Override
  public String id() {
    return "B3";
  }

  @Override
  public String title() {
    return "one hot key, 8 threads waiting, handoffs/s";
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    long ramp = Math.min(500_000_000L, o.roundNanos() / 4);
    long key = Benchmark.keyBase();
    List<Connection> raw = new ArrayList<>();
    PreparedStatement[] rawLock = new PreparedStatement[THREADS];
    PreparedStatement[] rawUnlock = new PreparedStatement[THREADS];
    List<PgLocks> perThread = new ArrayList<>();
    try (PgLocks shared = db.pgLocks("b3", b -> b)) {
      for (int t = 0; t < THREADS; t++) {
        Connection c = db.connect(db.runPrefix + "-b3-raw");
        raw.add(c);
        rawLock[t] = c.prepareStatement("SELECT pg_advisory_lock(?)");
        rawLock[t].setLong(1, key);
        rawUnlock[t] = c.prepareStatement("SELECT pg_advisory_unlock(?)");
        rawUnlock[t].setLong(1, key);
        // Each waits for one lock at a time, so one wait session is all it can use.
        perThread.add(db.pgLocks("b3-p" + t, b -> b.waitSessions(1)));
      }
      Load.PerThread rawSetup = t -> {
        PreparedStatement lock = rawLock[t];
        PreparedStatement unlock = rawUnlock[t];
        return i -> {
          lock.executeQuery().close();
          try (ResultSet rs = unlock.executeQuery()) {
            rs.next();
            if (!rs.getBoolean(1)) {
              throw new IllegalStateException("raw unlock of the hot key returned false");
            }
          }
        };
      };
      SessionLock sharedLock = shared.lock(LockKey.of(key));
      Load.Cycle sharedCycle = t -> {
        LockHandle h = sharedLock.acquire();
        h.close();
      };
      Load.PerThread separateSetup = t -> {
        SessionLock l = perThread.get(t).lock(LockKey.of(key));
        return i -> l.acquire().close();
      };
      Load.Window[] lastShared = new Load.Window[1];
      Load.Window[] lastRaw = new Load.Window[1];
      Rounds.Paired p = Rounds.interleave(o.rounds(),
          () -> (lastRaw[0] = Load.run(THREADS, ramp, o.roundNanos(), "b3-raw", rawSetup)).perSecond(),
          () -> (lastShared[0] = Load.run(THREADS, ramp, o.roundNanos(), "b3-pglock", sharedCycle)).perSecond());
      // The informational variant, interleaved with its own baseline rounds.
      Load.Window[] lastSeparate = new Load.Window[1];
      Rounds.Paired q = Rounds.interleave(o.rounds(),
          () -> Load.run(THREADS, ramp, o.roundNanos(), "b3-raw", rawSetup).perSecond(),
          () -> (lastSeparate[0] = Load.run(THREADS, ramp, o.roundNanos(), "b3-8inst", separateSetup))
              .perSecond());
      int separateSessions = perThread.stream().mapToInt(PgLocks::openSessions).sum();
      Rounds.Paired pq = p.quiet(false);
      Rounds.Paired qq = q.quiet(false);
      Report r = new Report(id(), title());
      r.atLeast("handoffs/s, 8 threads, one PgLocks", Report.fmt("%,.0f/s", pq.baselineMedian()),
          Report.fmt("%,.0f/s", pq.pglockMedian()), pq.ratio(), GOAL);
      r.info("handoffs/s, 8 PgLocks (no local handoff)", Report.fmt("%,.0f/s", qq.baselineMedian()),
          Report.fmt("%,.0f/s", qq.pglockMedian()), Report.fmt("%.2fx", qq.ratio()));
      r.note("one PgLocks: %s (handoffs/s)", p.detail("%.0f"));
      r.note("one PgLocks: %s", Rounds.summary(p, pq, "%,.0f/s"));
      r.note("8 PgLocks:   %s (handoffs/s)", q.detail("%.0f"));
      r.note("8 PgLocks:   %s", Rounds.summary(q, qq, "%,.0f/s"));
      r.note("fairness, last round, min..max acquisitions per thread: raw %d..%d, one PgLocks %d..%d, "
          + "8 PgLocks %d..%d", lastRaw[0].minThread(), lastRaw[0].maxThread(), lastShared[0].minThread(),
          lastShared[0].maxThread(), lastSeparate[0].minThread(), lastSeparate[0].maxThread());
      r.note("sessions open: one PgLocks %d, 8 PgLocks %d in all", shared.openSessions(), separateSessions);
      return r;
    } finally {
      for (PgLocks l : perThread) {
        l.close();
      }
      for (Connection c : raw) {
        c.close();
      }
    }
  }
}
