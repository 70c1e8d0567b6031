package io.pglock.bench;

import io.pglock.HandleState;
import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.LockSessionException;
import io.pglock.LossCause;
import io.pglock.PgLocks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * B5's latency half: trials of "hold a lock, let the session go idle, terminate its backend from
 * another connection, time until the handle says {@code LOST}". One {@code PgLocks} serves every
 * trial: after a loss, the next acquire opens a new lock session. Each trial takes a new key, finds
 * the one backend holding it (whose application_name names this run's node), and terminates only
 * that backend.
 */
final class LossLatency {
  /** How often the measuring thread looks at {@code state()}: fine against a 50 ms goal. */
  static final long POLL_NANOS = 50_000;

  /** What the trials found. Times in milliseconds from just before {@code pg_terminate_backend}. */
  record Result(double[] stateLost, double[] lostCompleted, int timedOut, Map<LossCause, Integer> causes,
      double terminateCallMillis) {
    double percentile(double p) {
      return LossLatency.percentile(stateLost, p);
    }
  }

  private final Db db;
  private final PgLocks locks;
  private final String appPattern;
  private final long idleNanos;
  private final long jitterNanos;
  private final long timeoutNanos;

  /**
   * @param appPattern LIKE pattern the lock session's application_name must match
   * @param idle how long the session stays idle at least after the acquire before its backend is
   *     terminated
   * @param jitter a random extra idle time, uniform from 0 to this, drawn per trial
   * @param timeout how long a trial waits for {@code LOST} before it counts as timed out
   */
  LossLatency(Db db, PgLocks locks, String appPattern, Duration idle, Duration jitter, Duration timeout) {
    this.db = db;
    this.locks = locks;
    this.appPattern = appPattern;
    this.idleNanos = idle.toNanos();
    this.jitterNanos = jitter.toNanos();
    this.timeoutNanos = timeout.toNanos();
  }

  Result run(int trials, long keyBase) throws Exception {
    double[] stateLost = new double[trials];
    double[] lostCompleted = new double[trials];
    int timedOut = 0;
    Map<LossCause, Integer> causes = new TreeMap<>();
    double terminateCall = 0;
    try (Connection killer = db.connect(db.runPrefix + "-b5-killer");
        PreparedStatement terminate = killer.prepareStatement("SELECT pg_terminate_backend(?)")) {
      for (int i = 0; i < trials; i++) {
        long key = keyBase + i;
        LockHandle h = acquire(LockKey.of(key));
        int pid = Db.holderPid(killer, appPattern, key);
        AtomicLong completedAt = new AtomicLong();
        AtomicReference<LossCause> cause = new AtomicReference<>();
        h.lost().thenAccept(c -> {
          completedAt.set(System.nanoTime());
          cause.set(c);
        });
        // a random phase against any periodic check in the session loop: a fixed idle time would
        // always hit the same point of its period and measure that point, not the distribution
        parkFor(idleNanos + ThreadLocalRandom.current().nextLong(jitterNanos));
        if (h.state() != HandleState.HELD) {
          throw new IllegalStateException("trial " + i + ": the handle is " + h.state() + " before the terminate");
        }
        long t0 = System.nanoTime();
        terminate.setInt(1, pid);
        try (ResultSet rs = terminate.executeQuery()) {
          rs.next();
          if (!rs.getBoolean(1)) {
            throw new IllegalStateException("trial " + i + ": pg_terminate_backend(" + pid + ") returned false");
          }
        }
        terminateCall += (System.nanoTime() - t0) / 1e6;
        long deadline = t0 + timeoutNanos;
        while (h.state() != HandleState.LOST && System.nanoTime() - deadline < 0) {
          LockSupport.parkNanos(POLL_NANOS);
        }
        long t1 = System.nanoTime();
        if (h.state() != HandleState.LOST) {
          timedOut++;
          h.close();
          stateLost[i] = lostCompleted[i] = Double.POSITIVE_INFINITY;
          continue;
        }
        stateLost[i] = (t1 - t0) / 1e6;
        // lost() completes on the callback executor, just after the state changes
        long cdeadline = System.nanoTime() + 5_000_000_000L;
        while (completedAt.get() == 0 && System.nanoTime() - cdeadline < 0) {
          LockSupport.parkNanos(POLL_NANOS);
        }
        lostCompleted[i] = completedAt.get() == 0 ? Double.POSITIVE_INFINITY : (completedAt.get() - t0) / 1e6;
        causes.merge(cause.get() == null ? LossCause.CONNECTION_LOST : cause.get(), 1, Integer::sum);
        h.close();
      }
    }
    return new Result(stateLost, lostCompleted, timedOut, causes, terminateCall / trials);
  }

  /** Acquires a free key; right after a loss, the first attempt may still meet the dead session. */
  private LockHandle acquire(LockKey key) throws InterruptedException {
    List<String> failures = new ArrayList<>();
    for (int attempt = 0; attempt < 5; attempt++) {
      try {
        return locks.lock(key).tryAcquire(Duration.ofSeconds(10)).orElseThrow(
            () -> new IllegalStateException("pglock try-acquire of free key " + key + " failed"));
      } catch (LockSessionException e) {
        failures.add(e.getMessage());
        parkFor(100_000_000L);
      }
    }
    throw new IllegalStateException("could not acquire " + key + " in 5 attempts: " + failures);
  }

  static void parkFor(long nanos) {
    long until = System.nanoTime() + nanos;
    long left;
    while ((left = until - System.nanoTime()) > 0) {
      LockSupport.parkNanos(left);
    }
  }

  /** Nearest-rank percentile (p in 0..1); infinite entries (timeouts) sort last. */
  static double percentile(double[] values, double p) {
    double[] s = values.clone();
    Arrays.sort(s);
    int rank = (int) Math.ceil(p * s.length);
    return s[Math.max(0, Math.min(s.length - 1, rank - 1))];
  }
}
