package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/** The local wait queue of a key: waiters that leave, shared holders joining, interrupts at close. */
class LocalQueueTest extends PgLocksTestSupport {

  private static boolean parkedInLockTable(Thread t) {
    Object blocker = t == null ? null : LockSupport.getBlocker(t);
    return blocker != null && blocker.getClass().getSimpleName().equals("LockTable");
  }

  /**
   * Item 3: a shared waiter queued behind an exclusive waiter that times out is granted at once,
   * since only shared holders hold the key.
   */
  @Test
  void sharedWaiter_behindAnExclusiveWaiterThatTimesOut_isGrantedAtOnce() throws Exception {
    PgLocks locks = newLocks();
    SessionReadWriteLock rw = locks.readWriteLock("leave-cleanly");
    LockHandle reader = rw.readLock().tryAcquire().orElseThrow();
    AtomicReference<Thread> writerThread = new AtomicReference<>();
    Future<Optional<LockHandle>> writer = inBackground(() -> {
      writerThread.set(Thread.currentThread());
      return rw.writeLock().tryAcquire(Duration.ofSeconds(2));
    });
    await("the writer queues locally", Duration.ofSeconds(10), () -> parkedInLockTable(writerThread.get()));
    AtomicReference<Thread> readerThread = new AtomicReference<>();
    Future<Optional<LockHandle>> secondReader = inBackground(() -> {
      readerThread.set(Thread.currentThread());
      return rw.readLock().tryAcquire(Duration.ofSeconds(30));
    });
    await("the second reader queues behind the writer", Duration.ofSeconds(10),
        () -> parkedInLockTable(readerThread.get()));
    assertThat(writer.get(10, TimeUnit.SECONDS)).isEmpty();
    long left = System.nanoTime();
    // Without the fix the reader stays parked until the first reader lets go (never, here).
    Optional<LockHandle> got = secondReader.get(5, TimeUnit.SECONDS);
    assertThat(got).isPresent();
    assertThat((System.nanoTime() - left) / 1_000_000).isLessThan(2_000);
    assertThat(reader.isHeld()).isTrue();
    got.get().close();
    reader.close();
  }

  /** Item 4: with local handoffs disabled, a second local reader still joins a held shared lock. */
  @Test
  void secondLocalReader_joins_evenWithLocalHandoffsDisabled() throws Exception {
    PgLocks locks = track(builder().maxLocalHandoffs(0).build());
    SessionLock read = locks.readWriteLock("readers").readLock();
    LockHandle first = read.tryAcquire().orElseThrow();
    Optional<LockHandle> second = read.tryAcquire();
    assertThat(second).as("a second local reader, as a reader in another process would").isPresent();
    second.get().close();
    first.close();
  }

  /** Item 4: past the handoff cap, readers keep joining: joins are no handoffs. */
  @Test
  void manyLocalReaders_joinPastTheHandoffCap() throws Exception {
    PgLocks locks = track(builder().maxLocalHandoffs(2).build());
    SessionLock read = locks.readWriteLock("many-readers").readLock();
    LockHandle first = read.tryAcquire().orElseThrow();
    for (int i = 0; i < 10; i++) {
      Optional<LockHandle> more = read.tryAcquire();
      assertThat(more).as("reader %d", i + 2).isPresent();
      more.get().close();
    }
    first.close();
  }

  /**
   * Item 5: an interrupt that races {@code PgLocks.close()} ending a local wait is never swallowed:
   * the waiter either throws InterruptedException or ends with the flag still set.
   */
  @Test
  void interruptRacingClose_ofALocalWait_isNeverSwallowed() throws Exception {
    for (int i = 0; i < 30; i++) {
      PgLocks locks = builder().build();
      try {
        LockHandle held = locks.lock("interrupt-close").tryAcquire().orElseThrow();
        AtomicReference<Thread> waiter = new AtomicReference<>();
        Future<String> f = inBackground(() -> {
          waiter.set(Thread.currentThread());
          try {
            locks.lock("interrupt-close").acquire();
            return "acquired";
          } catch (InterruptedException e) {
            return "interrupted";
          } catch (PgLocksClosedException e) {
            return Thread.currentThread().isInterrupted() ? "closed, flag set" : "closed, interrupt lost";
          }
        });
        await("the waiter parks locally", Duration.ofSeconds(10), () -> parkedInLockTable(waiter.get()));
        waiter.get().interrupt();
        locks.close();
        assertThat(f.get(10, TimeUnit.SECONDS)).as("round %d", i).isIn("interrupted", "closed, flag set");
        assertThat(held.state()).isEqualTo(HandleState.LOST);
      } finally {
        locks.close();
      }
    }
  }
}
