package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A blocking wait that lasts longer than the waiter's lease. The server does not count the lease
 * while a statement runs, and a wait session holds nothing while it waits, so the wait must go on
 * until the lock is free or the caller's timeout passes.
 */
class WaitBeyondLeaseTest extends PgLocksTestSupport {
  private final ExecutorService waiterThread = Executors.newSingleThreadExecutor();

  @AfterEach
  void stopWaiter() {
    waiterThread.shutdownNow();
  }

  @Test
  void acquire_otherHoldsLongerThanWaitersLease_grantedWhenReleased() throws Exception {
    Duration lease = PgLocksBuilder.MIN_LEASE; // 1 s
    PgLocks holder = newLocks();
    PgLocks waiter = track(builder().lease(lease).build());
    LockHandle held = holder.lock("long-wait").acquire(Duration.ofSeconds(5));

    long started = System.nanoTime();
    CompletableFuture<LockHandle> waiting = CompletableFuture.supplyAsync(() -> {
      try {
        return waiter.lock("long-wait").acquire(Duration.ofSeconds(30));
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }, waiterThread);
    // The holder's workload: keep the lock for three of the waiter's leases.
    long holdUntil = started + lease.multipliedBy(3).toNanos();
    await("the waiter to wait three leases, or give up", Duration.ofSeconds(30),
        () -> waiting.isDone() || System.nanoTime() - holdUntil >= 0);
    long gaveUpAfter = System.nanoTime() - started;
    assertThat(waiting).as("the waiter gave up after %d ms, while the lock was still held: %s",
        gaveUpAfter / 1_000_000, waiting.isDone() ? waiting.handle((h, e) -> e).join() : "").isNotDone();

    held.close();
    try (LockHandle got = waiting.get(10, TimeUnit.SECONDS)) {
      assertThat(got.isHeld()).isTrue();
    }
  }
}
