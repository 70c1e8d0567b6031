package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Close with waits on the server, interrupts racing wait-session grants, transaction waits after close. */
class CloseAndInterruptTest extends PgLocksTestSupport {

  /**
   * close() is prompt with a waiter blocked on a wait session: the cancelled waiter may not queue
   * another chunk there, and ends with PgLocksClosedException.
   */
  @Test
  void close_withAWaiterBlockedOnTheServer_isPrompt() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    LockHandle h = a.lock("close-server-wait").acquire(Duration.ofSeconds(5));
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Object> f = pool.submit(() -> {
        try {
          return b.lock("close-server-wait").acquire();
        } catch (RuntimeException e) {
          return e;
        }
      });
      await("b blocks on a wait session", Duration.ofSeconds(10), () -> serverWaiters() == 1);
      long t0 = System.nanoTime();
      b.close();
      long closeMillis = (System.nanoTime() - t0) / 1_000_000;
      Object outcome = f.get(30, TimeUnit.SECONDS);
      long endMillis = (System.nanoTime() - t0) / 1_000_000;
      System.out.println("close took " + closeMillis + " ms; waiter ended after " + endMillis + " ms: " + outcome);
      assertThat(outcome).isInstanceOf(PgLocksClosedException.class);
      assertThat(closeMillis).as("close() duration ms").isLessThan(2_000);
    } finally {
      h.close();
      pool.shutdownNow();
    }
  }

  /**
   * An interrupt racing a wait-session grant is never swallowed: the acquire throws, or returns the
   * handle with the interrupt still set.
   */
  @Test
  void interruptRacingWaitSessionGrant_isNeverSwallowed() throws Exception {
    PgLocks b = newLocks();
    LockKey key = b.key("intr-ws-race");
    ExecutorService pool = Executors.newSingleThreadExecutor();
    List<String> lost = new ArrayList<>();
    int granted = 0;
    try (Connection holder = connect(); Statement hs = holder.createStatement()) {
      for (int i = 0; i < 400 && lost.isEmpty(); i++) {
        hs.execute("SELECT pg_advisory_lock(" + key.int64() + ")");
        AtomicReference<Thread> w = new AtomicReference<>();
        java.util.concurrent.atomic.AtomicBoolean sent = new java.util.concurrent.atomic.AtomicBoolean();
        Future<String> f = pool.submit(() -> {
          w.set(Thread.currentThread());
          try (LockHandle got = b.lock(key).acquire()) {
            while (!sent.get()) {
              Thread.onSpinWait(); // the interrupt may come after the grant: it must still be set
            }
            return Thread.interrupted() ? "granted, interrupt kept" : "granted, interrupt LOST";
          } catch (InterruptedException e) {
            return "interrupted";
          }
        });
        await("b waits on the server", Duration.ofSeconds(10), () -> serverWaiters() == 1);
        hs.execute("SELECT pg_advisory_unlock_all()");
        long spin = System.nanoTime() + (i % 40) * 5_000L; // 0..200 us after the release
        while (System.nanoTime() - spin < 0) {
          Thread.onSpinWait();
        }
        w.get().interrupt();
        sent.set(true);
        String outcome = f.get(20, TimeUnit.SECONDS);
        if (outcome.startsWith("granted")) {
          granted++;
        }
        if (outcome.endsWith("LOST")) {
          lost.add("iteration " + i + ": " + outcome);
        }
        await("nothing held", Duration.ofSeconds(10), () -> b.heldLocks() == 0 && serverWaiters() == 0);
      }
    } finally {
      pool.shutdownNow();
    }
    System.out.println("granted " + granted + " times");
    assertThat(lost).isEmpty();
  }

  /** A transaction-lock wait on the caller's connection stays interruptible after PgLocks.close(). */
  @Test
  void xactWait_staysInterruptible_afterPgLocksClose() throws Exception {
    PgLocks locks = newLocks();
    Connection holder = connect();
    holder.setAutoCommit(false);
    assertThat(locks.inTransaction(holder).tryLock("xact-close")).isTrue();
    Connection c = connect();
    c.setAutoCommit(false);
    TransactionLocks tx = locks.inTransaction(c);
    AtomicReference<Thread> w = new AtomicReference<>();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<String> f = pool.submit(() -> {
        w.set(Thread.currentThread());
        try {
          tx.lock(locks.key("xact-close"), LockMode.EXCLUSIVE);
          return "granted";
        } catch (InterruptedException e) {
          return "interrupted";
        } catch (RuntimeException e) {
          return e.toString();
        }
      });
      await("waiting on the server", Duration.ofSeconds(10), () -> serverWaiters() == 1);
      locks.close();
      w.get().interrupt();
      String outcome;
      try {
        outcome = f.get(5, TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        outcome = "still waiting 5 s after the interrupt";
      }
      holder.rollback();
      assertThat(outcome).isEqualTo("interrupted");
    } finally {
      holder.rollback();
      pool.shutdownNow();
    }
  }
}
