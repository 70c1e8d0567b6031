package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Waiting: across instances (wait sessions, polling), interrupts, timeouts racing grants, fairness. */
class WaitingTest extends PgLocksTestSupport {

  @Test
  void acquire_heldElsewhere_isWokenPromptlyByTheServerWhenReleased() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    LockHandle h = a.lock("prompt").acquire(Duration.ofSeconds(5));
    Future<Long> grantedAt = inBackground(() -> {
      try (LockHandle got = b.lock("prompt").acquire(Duration.ofSeconds(30))) {
        return System.nanoTime();
      }
    });
    await("b blocks on a wait session", Duration.ofSeconds(10), () -> serverWaiters() == 1);
    long released = System.nanoTime();
    h.close();
    long delayMillis = (grantedAt.get(30, TimeUnit.SECONDS) - released) / 1_000_000;
    assertThat(delayMillis).isLessThan(1_000); // typically a millisecond: the server wakes the waiter
  }

  @Test
  void acquire_withoutWaitSessions_pollsAndGetsTheLock() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = track(builder().waitSessions(0).build());
    LockHandle h = a.lock("poll").acquire(Duration.ofSeconds(5));
    Future<Boolean> got = inBackground(() -> {
      try (LockHandle g = b.lock("poll").acquire(Duration.ofSeconds(30))) {
        return g.isHeld();
      }
    });
    assertThat(b.openSessions()).isEqualTo(1);
    h.close();
    assertThat(got.get(30, TimeUnit.SECONDS)).isTrue();
    assertThat(b.openSessions()).isEqualTo(1); // never more than its lock session
  }

  @Test
  void acquire_interrupted_throwsAndHoldsNothing_andWaitSessionIsReused() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = track(builder().waitSessions(1).build());
    LockHandle h = a.lock("intr").acquire(Duration.ofSeconds(5));
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Throwable> f = pool.submit(() -> {
        try {
          b.lock("intr").acquire();
          return null;
        } catch (InterruptedException e) {
          return e;
        }
      });
      await("b blocks on a wait session", Duration.ofSeconds(10), () -> serverWaiters() == 1);
      pool.shutdownNow();
      assertThat(f.get(10, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
      await("the server wait is cancelled", Duration.ofSeconds(10), () -> serverWaiters() == 0);
      assertThat(b.heldLocks()).isZero();
      h.close();
      try (LockHandle again = b.lock("intr").acquire(Duration.ofSeconds(10))) {
        assertThat(again.isHeld()).isTrue();
        assertThat(b.openSessions()).isEqualTo(2); // its lock session and its one wait session
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void timeoutRacingRelease_neverLeavesAnUnownedLockHeld() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    Connection c = connect();
    LockKey key = a.key("race");
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      for (int i = 0; i < 40; i++) {
        LockHandle h = a.lock("race").acquire(Duration.ofSeconds(5));
        long waitMillis = 30 + (i % 10) * 3;
        Future<Optional<LockHandle>> attempt = pool.submit(() -> b.lock("race").tryAcquire(Duration.ofMillis(waitMillis)));
        Thread.sleep(waitMillis - 3 + (i % 7)); // simulated work ending around the waiter's timeout
        h.close();
        Optional<LockHandle> got = attempt.get(10, TimeUnit.SECONDS);
        if (got.isPresent()) {
          assertThat(got.get().isHeld()).isTrue();
          got.get().close();
        }
        // Whatever the outcome, once every handle is closed nobody may hold the lock.
        await("iteration " + i + " leaves nothing held", Duration.ofSeconds(5),
            () -> holders(c, key) == 0 && b.heldLocks() == 0);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void reentry_isRefused_whereasPostgresStacks() throws Exception {
    PgLocks locks = newLocks();
    Connection raw = connect();
    Connection other = connect();
    LockKey key = locks.key("stack");
    // PostgreSQL itself stacks: lock twice, unlock once, and the lock is still held.
    assertThat(queryBoolean(raw, "SELECT pg_try_advisory_lock(?)", key.int64())).isTrue();
    assertThat(queryBoolean(raw, "SELECT pg_try_advisory_lock(?)", key.int64())).isTrue();
    assertThat(queryBoolean(raw, "SELECT pg_advisory_unlock(?)", key.int64())).isTrue();
    assertThat(queryBoolean(other, "SELECT pg_try_advisory_lock(?)", key.int64())).isFalse();
    assertThat(queryBoolean(raw, "SELECT pg_advisory_unlock(?)", key.int64())).isTrue();
    // pglock does not: a second acquire through the same instance is refused, and one close frees it.
    LockHandle h = locks.lock("stack").tryAcquire().orElseThrow();
    assertThat(locks.lock("stack").tryAcquire()).isEmpty();
    assertThat(locks.lock(LockKey.of(key.int64())).tryAcquire()).as("same server lock by number").isEmpty();
    h.close();
    await("one close frees the server lock", Duration.ofSeconds(5), () -> holders(raw, key) == 0);
    assertThat(queryBoolean(other, "SELECT pg_try_advisory_lock(?)", key.int64())).isTrue();
    assertThat(queryBoolean(other, "SELECT pg_advisory_unlock(?)", key.int64())).isTrue();
  }

  @Test
  void sharedHolders_shareOneServerLock_freedWithTheLast() throws Exception {
    PgLocks locks = newLocks();
    Connection other = connect();
    LockKey key = locks.key("readers");
    LockHandle r1 = locks.readWriteLock("readers").readLock().tryAcquire().orElseThrow();
    LockHandle r2 = locks.readWriteLock("readers").readLock().tryAcquire().orElseThrow();
    assertThat(holders(other, key)).isEqualTo(1);
    r1.close();
    assertThat(queryBoolean(other, "SELECT pg_try_advisory_lock(?)", key.int64())).isFalse();
    r2.close();
    await("last reader frees it", Duration.ofSeconds(5), () -> holders(other, key) == 0);
  }

  @Test
  void localContention_doesNotStarveAnotherProcess() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      for (int t = 0; t < 3; t++) {
        pool.submit(() -> {
          while (!stop.get()) {
            try (LockHandle h = a.lock("fair").acquire(Duration.ofSeconds(30))) {
              Thread.onSpinWait();
            }
          }
          return null;
        });
      }
      try (LockHandle h = b.lock("fair").acquire(Duration.ofSeconds(20))) {
        assertThat(h.isHeld()).isTrue();
      }
    } finally {
      stop.set(true);
      pool.shutdown();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void readersAndWriters_acrossInstances_neverOverlap() throws Exception {
    List<PgLocks> instances = List.of(newLocks(), newLocks());
    AtomicInteger readers = new AtomicInteger();
    AtomicInteger writers = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      PgLocks locks = instances.get(t % 2);
      boolean writer = t % 4 == 0;
      futures.add(pool.submit(() -> {
        SessionReadWriteLock rw = locks.readWriteLock("rw");
        for (int i = 0; i < 60; i++) {
          try (LockHandle h = (writer ? rw.writeLock() : rw.readLock()).acquire(Duration.ofSeconds(60))) {
            if (writer) {
              if (writers.incrementAndGet() != 1 || readers.get() != 0) {
                violations.incrementAndGet();
              }
              writers.decrementAndGet();
            } else {
              readers.incrementAndGet();
              if (writers.get() != 0) {
                violations.incrementAndGet();
              }
              readers.decrementAndGet();
            }
          }
          done.incrementAndGet();
        }
        return null;
      }));
    }
    try {
      for (Future<?> f : futures) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(done.get()).isEqualTo(8 * 60);
    assertThat(violations.get()).isZero();
  }

}
