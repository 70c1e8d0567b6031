package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Local readers joining a shared lock never starve a writer in another process: past the handoff
 * cap a join first asks the server whether a writer waits, as PostgreSQL refuses a remote reader
 * while one does. (Uncapped joins that ask nobody kept the writer out for good.)
 */
class WriterStarvationTest extends PgLocksTestSupport {
  @Test
  void remoteWriter_getsIn_whileLocalReadersOverlap() throws Exception {
    PgLocks readers = newLocks();
    PgLocks writerSide = newLocks();
    SessionLock read = readers.readWriteLock("starve").readLock();
    AtomicBoolean stop = new AtomicBoolean();
    java.util.concurrent.atomic.AtomicInteger acquired = new java.util.concurrent.atomic.AtomicInteger();
    List<Future<Integer>> threads = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      threads.add(inBackground(() -> {
        int n = 0;
        while (!stop.get()) {
          Optional<LockHandle> h = read.tryAcquire(Duration.ofMillis(200));
          if (h.isPresent()) {
            acquired.incrementAndGet();
            java.util.concurrent.locks.LockSupport.parkNanos(30_000_000L); // hold 30 ms, overlapping the other reader
            h.get().close();
            n++;
          }
        }
        return n;
      }));
    }
    await("readers are in", Duration.ofSeconds(10), () -> acquired.get() >= 4);
    Optional<LockHandle> w;
    try {
      w = writerSide.readWriteLock("starve").writeLock().tryAcquire(Duration.ofSeconds(5));
    } finally {
      stop.set(true);
    }
    for (Future<Integer> f : threads) {
      f.get(10, TimeUnit.SECONDS);
    }
    assertThat(w).as("the writer in another process, after 5 s of overlapping local readers").isPresent();
    w.get().close();
  }
}
