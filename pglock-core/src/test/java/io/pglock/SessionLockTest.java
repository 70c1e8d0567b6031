package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SessionLockTest extends PgLocksTestSupport {

  @Test
  void tryAcquire_freeLock_holdsItOnServer() throws Exception {
    PgLocks locks = newLocks();
    Connection c = connect();
    try (LockHandle h = locks.lock("a").tryAcquire().orElseThrow()) {
      assertThat(h.isHeld()).isTrue();
      assertThat(h.state()).isEqualTo(HandleState.HELD);
      assertThat(serverHolders(c, locks.key("a"))).isEqualTo(1);
      assertThat(locks.heldLocks()).isEqualTo(1);
    }
    await("release on server", Duration.ofSeconds(5), () -> holders(c, locks.key("a")) == 0);
    // heldLocks() drops when the session has processed the unlock's answer, a moment later
    await("release counted", Duration.ofSeconds(5), () -> locks.heldLocks() == 0);
  }

  @Test
  void tryAcquire_heldByOtherInstance_isEmpty() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    try (LockHandle h = a.lock("x").tryAcquire().orElseThrow()) {
      assertThat(b.lock("x").tryAcquire()).isEmpty();
      assertThat(h.isHeld()).isTrue();
    }
    await("b gets it after release", Duration.ofSeconds(5), () -> {
      Optional<LockHandle> h = b.lock("x").tryAcquire();
      h.ifPresent(LockHandle::close);
      return h.isPresent();
    });
  }

  @Test
  void tryAcquire_heldBySameInstance_isEmpty_notStacked() throws Exception {
    PgLocks locks = newLocks();
    Connection c = connect();
    LockHandle h = locks.lock("same").tryAcquire().orElseThrow();
    assertThat(locks.lock("same").tryAcquire()).isEmpty();
    h.close();
    await("released on server", Duration.ofSeconds(5), () -> holders(c, locks.key("same")) == 0);
  }

  @Test
  void acquire_waitsForOtherInstance_thenGetsIt() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    LockHandle h = a.lock("w").acquire(Duration.ofSeconds(5));
    CountDownLatch started = new CountDownLatch(1);
    Future<LockHandle> waiting = inBackground(() -> {
      started.countDown();
      return b.lock("w").acquire(Duration.ofSeconds(20));
    });
    started.await();
    assertThat(waiting.isDone()).isFalse();
    h.close();
    try (LockHandle got = waiting.get(10, TimeUnit.SECONDS)) {
      assertThat(got.isHeld()).isTrue();
    }
  }

  @Test
  void acquire_timeout_throwsAndHoldsNothing() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    try (LockHandle h = a.lock("t").acquire(Duration.ofSeconds(5))) {
      assertThatThrownBy(() -> b.lock("t").acquire(Duration.ofMillis(200)))
          .isInstanceOf(LockTimeoutException.class)
          .hasMessageContaining("name:test:t");
      assertThat(b.heldLocks()).isZero();
    }
  }

  @Test
  void localWaiters_exclusive_neverOverlap() throws Exception {
    PgLocks locks = newLocks();
    int threads = 8;
    int rounds = 200;
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int t = 0; t < threads; t++) {
        pool.submit(() -> {
          for (int i = 0; i < rounds; i++) {
            try (LockHandle h = locks.lock("hot").acquire(Duration.ofSeconds(30))) {
              int now = inside.incrementAndGet();
              maxInside.accumulateAndGet(now, Math::max);
              inside.decrementAndGet();
            }
            done.incrementAndGet();
          }
          return null;
        });
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
    } finally {
      pool.shutdownNow();
    }
    assertThat(done.get()).isEqualTo(threads * rounds);
    assertThat(maxInside.get()).isEqualTo(1);
  }

  @Test
  void readLocks_share_writerExcluded() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    Connection c = connect();
    SessionReadWriteLock rw = a.readWriteLock("catalog");
    LockHandle r1 = rw.readLock().tryAcquire().orElseThrow();
    LockHandle r2 = rw.readLock().tryAcquire().orElseThrow();
    LockHandle r3 = b.readWriteLock("catalog").readLock().tryAcquire().orElseThrow();
    assertThat(serverHolders(c, a.key("catalog"))).isEqualTo(2); // one per instance: local readers share
    assertThat(b.readWriteLock("catalog").writeLock().tryAcquire()).isEmpty();
    assertThat(rw.writeLock().tryAcquire()).isEmpty();
    r1.close();
    r2.close();
    r3.close();
    await("writer gets it", Duration.ofSeconds(5), () -> {
      Optional<LockHandle> w = b.readWriteLock("catalog").writeLock().tryAcquire();
      w.ifPresent(LockHandle::close);
      return w.isPresent();
    });
  }

  @Test
  void close_isIdempotent_andUseAfterCloseIsClearError() {
    PgLocks locks = newLocks();
    LockHandle h = locks.lock("c").tryAcquire().orElseThrow();
    h.close();
    h.close();
    assertThat(h.state()).isEqualTo(HandleState.RELEASED);
    assertThat(h.isHeld()).isFalse();
    assertThatThrownBy(h::ensureHeld).isInstanceOf(LockNotHeldException.class)
        .hasMessageContaining("was closed");
  }

  @Test
  void handle_closedFromAnotherThread_releases() throws Exception {
    PgLocks locks = newLocks();
    LockHandle h = locks.lock("other-thread").tryAcquire().orElseThrow();
    Thread t = new Thread(h::close);
    t.start();
    t.join(5000);
    assertThat(h.state()).isEqualTo(HandleState.RELEASED);
    try (LockHandle again = locks.lock("other-thread").acquire(Duration.ofSeconds(5))) {
      assertThat(again.isHeld()).isTrue();
    }
  }
}
