package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/**
 * Handles belong to no thread: virtual threads acquire, and other virtual threads release. Runs on
 * Java 21+ (CI runs the suite on Temurin 25 too); skipped on 17, where virtual threads do not exist.
 */
class VirtualThreadsTest extends PgLocksTestSupport {

  @Test
  void virtualThreads_acquireAndReleaseFromOtherThreads_keepMutualExclusion() throws Exception {
    assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21+");
    Method factory = Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
    PgLocks locks = newLocks();
    int keys = 8;
    int tasks = 400;
    AtomicIntegerArray inside = new AtomicIntegerArray(keys);
    AtomicInteger violations = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    ExecutorService acquirers = (ExecutorService) factory.invoke(null);
    ExecutorService releasers = (ExecutorService) factory.invoke(null);
    try {
      List<java.util.concurrent.Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < tasks; t++) {
        int key = t % keys;
        futures.add(acquirers.submit(() -> {
          LockHandle h = locks.lock("vt-" + key).acquire(Duration.ofSeconds(60));
          if (inside.incrementAndGet(key) != 1) {
            violations.incrementAndGet();
          }
          // another virtual thread ends the critical section and releases the handle
          releasers.submit(() -> {
            inside.decrementAndGet(key);
            h.close();
            done.incrementAndGet();
          }).get();
          return null;
        }));
      }
      for (java.util.concurrent.Future<?> f : futures) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      acquirers.shutdownNow(); // ExecutorService is AutoCloseable only from Java 19 (compiled for 17)
      releasers.shutdownNow();
    }
    assertThat(violations.get()).isZero();
    assertThat(done.get()).isEqualTo(tasks);
  }
}
