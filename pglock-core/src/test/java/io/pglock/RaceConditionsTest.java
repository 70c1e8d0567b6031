package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/** Races found in review: close with waiters, interrupts racing grants, lease timers, stale handles. */
class RaceConditionsTest extends PgLocksTestSupport {

  private static boolean parkedInLockTable(Thread t) {
    Object blocker = LockSupport.getBlocker(t);
    return blocker != null && blocker.getClass().getSimpleName().equals("LockTable");
  }

  /** PgLocks.close() wakes a thread queued locally behind a holder, which then fails clearly. */
  @Test
  void close_wakesALocalWaiterQueuedBehindAHolder() throws Exception {
    assertCloseEndsLocalWait("close-wake", lock -> lock.acquireUninterruptibly());
  }

  /** The same for a timed wait: it ends at close with CLOSED, not after its timeout. */
  @Test
  void close_endsATimedLocalWaitPromptly() throws Exception {
    assertCloseEndsLocalWait("close-wake2", lock -> {
      try {
        return lock.tryAcquire(Duration.ofSeconds(30));
      } catch (InterruptedException e) {
        return e;
      }
    });
  }

  private void assertCloseEndsLocalWait(String name, java.util.function.Function<SessionLock, Object> acquire)
      throws Exception {
    PgLocks locks = newLocks();
    LockHandle h = locks.lock(name).acquire(Duration.ofSeconds(5));
    AtomicReference<Thread> waiter = new AtomicReference<>();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Object> f = pool.submit(() -> {
        waiter.set(Thread.currentThread());
        try {
          return acquire.apply(locks.lock(name));
        } catch (RuntimeException e) {
          return e;
        }
      });
      await("the waiter parks locally", Duration.ofSeconds(10),
          () -> waiter.get() != null && parkedInLockTable(waiter.get()));
      locks.close();
      assertThat(h.state()).isEqualTo(HandleState.LOST);
      Object outcome;
      try {
        outcome = f.get(10, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        throw new AssertionError("the wait for " + name + " still blocked 10 s after PgLocks.close()");
      }
      assertThat(outcome).isInstanceOf(PgLocksClosedException.class);
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * An op queued on a lock session after its loop left (orderly close) but before close() marked it
   * dead is still answered (failed), so no acquiring thread parks forever.
   */
  @Test
  void close_underLoad_neverStrandsAnAcquirer() throws Exception {
    for (int round = 0; round < 150; round++) {
      PgLocks locks = builder().build();
      AtomicBoolean stop = new AtomicBoolean();
      int threads = 48;
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        fs.add(pool.submit(() -> {
          while (!stop.get()) {
            try {
              Optional<LockHandle> h = locks.lock(LockKey.of(ThreadLocalRandom.current().nextLong())).tryAcquire();
              h.ifPresent(LockHandle::close);
            } catch (PgLockException e) {
              return null; // closed: fine
            }
          }
          return null;
        }));
      }
      Thread.sleep(5 + round % 20); // simulated work: let the load build up
      locks.close();
      stop.set(true);
      pool.shutdown();
      if (!pool.awaitTermination(15, TimeUnit.SECONDS)) {
        StringBuilder where = new StringBuilder();
        for (var e : Thread.getAllStackTraces().entrySet()) {
          for (StackTraceElement el : e.getValue()) {
            if (el.getMethodName().equals("awaitUninterruptibly")) {
              where.append(e.getKey().getName()).append(' ');
            }
          }
        }
        pool.shutdownNow();
        throw new AssertionError("round " + round + ": acquirers still blocked 15 s after close: " + where);
      }
    }
  }

  /**
   * An interruptible acquire that is interrupted while queued locally, and granted by a local
   * handoff at the same moment, either throws or returns the handle with the interrupt still set.
   */
  @Test
  void interruptRacingLocalHandoff_isNeverSwallowed() throws Exception {
    PgLocks locks = newLocks();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    int swallowed = 0;
    try {
      for (int i = 0; i < 200 && swallowed == 0; i++) {
        LockHandle h = locks.lock("intr-race").acquire(Duration.ofSeconds(5));
        AtomicReference<Thread> waiter = new AtomicReference<>();
        Future<String> f = pool.submit(() -> {
          waiter.set(Thread.currentThread());
          try (LockHandle got = locks.lock("intr-race").acquire(Duration.ofSeconds(30))) {
            return Thread.interrupted() ? "granted, interrupt kept" : "granted, interrupt LOST";
          } catch (InterruptedException e) {
            return "interrupted";
          }
        });
        await("parked", Duration.ofSeconds(10), () -> waiter.get() != null && parkedInLockTable(waiter.get()));
        waiter.get().interrupt();
        h.close();
        String outcome = f.get(10, TimeUnit.SECONDS);
        if (outcome.endsWith("LOST")) {
          swallowed++;
        }
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(swallowed).as("acquires that returned a handle and dropped the interrupt").isZero();
  }

  /**
   * Keepalive detection (idle + 3 * interval, whole seconds) is never shorter than the lease, so the
   * server never drops a partitioned session before the client's deadline (s_last + lease - margin).
   */
  @Test
  void keepaliveDetection_isNeverShorterThanTheClientLease() throws Exception {
    List<String> bad = new ArrayList<>();
    for (int seconds : new int[] {7, 8, 9, 10, 11, 15, 16, 17, 30}) {
      PgLocks locks = track(builder().lease(Duration.ofSeconds(seconds)).build());
      long[] t = io.pglock.internal.TestAccess.serverTimersMillis(locks.config());
      long clientDeadline = seconds * 1000L - Math.max(100, seconds * 100L); // lease - margin
      if (t[1] < clientDeadline) {
        bad.add("lease " + seconds + " s: keepalives drop after " + t[1] + " ms, client holds until " + clientDeadline + " ms");
      }
    }
    assertThat(bad).isEmpty();
  }

  /**
   * isHeld() checks the session the handle was granted on: between sessionLost clearing the key and
   * markLost reaching a handle, a new local holder can be granted the key on a new session, and the
   * old, lost handle must not report isHeld() == true meanwhile.
   * (An inline callback executor only widens the window to make it deterministic.)
   */
  @Test
  void lostSharedHandle_neverReportsHeld_whileAWriterHoldsTheKey() throws Exception {
    String node = "review-f5-" + System.nanoTime() % 100000;
    PgLocks locks = track(builder().nodeName(node).callbackExecutor(Runnable::run).build());
    SessionReadWriteLock rw = locks.readWriteLock("f5");
    LockHandle r1 = rw.readLock().tryAcquire().orElseThrow();
    LockHandle r2 = rw.readLock().tryAcquire().orElseThrow(); // joins: same server lock
    AtomicReference<LockHandle> writer = new AtomicReference<>();
    AtomicReference<String> seen = new AtomicReference<>("callback did not run");
    r1.onLoss(cause -> {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (writer.get() == null && System.nanoTime() - deadline < 0) {
        Thread.onSpinWait();
      }
      seen.set("writer " + (writer.get() != null && writer.get().isHeld() ? "holds" : "does not hold")
          + ", lost reader r2.isHeld()=" + r2.isHeld() + " state=" + r2.state());
    });
    ExecutorService pool = Executors.newSingleThreadExecutor();
    AtomicReference<Thread> w = new AtomicReference<>();
    try {
      Future<?> f = pool.submit(() -> {
        w.set(Thread.currentThread());
        writer.set(rw.writeLock().acquire(Duration.ofSeconds(30)));
        return null;
      });
      await("writer queued locally", Duration.ofSeconds(10), () -> w.get() != null && parkedInLockTable(w.get()));
      try (var c = connect(); var st = c.createStatement()) {
        st.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'pglock:"
            + node + ":lock-0:%'");
      }
      // The next round trip on the session finds it dead: sessionLost runs on this thread.
      try {
        locks.lock("f5-other").tryAcquire().ifPresent(LockHandle::close);
      } catch (PgLockException e) {
        // the batch that found the session dead may fail; the loss broadcast has run
      }
      f.get(30, TimeUnit.SECONDS);
      writer.get().close();
    } finally {
      pool.shutdownNow();
    }
    // state() agrees with isHeld(): a handle whose session died is LOST before the broadcast reaches it
    assertThat(seen.get()).isEqualTo("writer holds, lost reader r2.isHeld()=false state=LOST");
  }

  /**
   * A cancel sent for an interrupt may still be in flight when the lock statement has already
   * succeeded; it must never land on RELEASE SAVEPOINT or the caller's next statement and abort the
   * caller's transaction.
   */
  @Test
  void interruptRacingXactGrant_neverAbortsTheCallersTransaction() throws Exception {
    PgLocks locks = newLocks();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    List<String> broken = new ArrayList<>();
    try {
      for (int i = 0; i < 150 && broken.isEmpty(); i++) {
        java.sql.Connection holder = connect();
        holder.setAutoCommit(false);
        assertThat(locks.inTransaction(holder).tryLock("xact-race")).isTrue();
        java.sql.Connection c = connect();
        c.setAutoCommit(false);
        AtomicReference<Thread> w = new AtomicReference<>();
        Future<String> f = pool.submit(() -> {
          w.set(Thread.currentThread());
          String how;
          try {
            locks.inTransaction(c).lock("xact-race", Duration.ofSeconds(10));
            how = "granted";
          } catch (InterruptedException e) {
            how = "interrupted";
          } catch (RuntimeException e) {
            return "lock() threw " + e;
          }
          Thread.interrupted();
          try (var st = c.createStatement()) {
            st.execute("SELECT 1"); // the caller's next statement in its transaction
            c.rollback();
            return "ok";
          } catch (java.sql.SQLException e) {
            c.rollback();
            return how + ", then the caller's next statement failed: " + e.getMessage();
          }
        });
        await("waiting on the server", Duration.ofSeconds(10), () -> serverWaitersOf("xact-race") == 1);
        w.get().interrupt();
        long nap = (i * 7919L) % 60; // release at a spread of moments around the 50 ms interrupt check
        if (nap > 0) {
          Thread.sleep(nap); // simulated work of the holder
        }
        holder.commit();
        String outcome = f.get(20, TimeUnit.SECONDS);
        if (!outcome.equals("ok")) {
          broken.add("iteration " + i + ": " + outcome);
        }
        holder.close();
        c.close();
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(broken).isEmpty();
  }

  private static int serverWaitersOf(String name) {
    try (var c = db().connect(); var ps = c.prepareStatement(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")) {
      try (var rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    } catch (java.sql.SQLException e) {
      throw new RuntimeException(e);
    }
  }
}
