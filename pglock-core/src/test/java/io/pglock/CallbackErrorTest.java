package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A throwing loss callback is logged at ERROR and does not stop the callbacks after it. */
class CallbackErrorTest extends PgLocksTestSupport {

  @Test
  void onLoss_callbackThrows_isLoggedAndLaterCallbacksStillRun() throws Exception {
    PgLocks locks = builder().build();
    LockHandle h = locks.lock("cb").tryAcquire().orElseThrow();
    CountDownLatch second = new CountDownLatch(1);
    h.onLoss(cause -> {
      throw new IllegalStateException("callback bug");
    });
    h.onLoss(cause -> second.countDown());
    locks.close();
    assertThat(second.await(5, TimeUnit.SECONDS)).isTrue();
    await("the error is logged", Duration.ofSeconds(5), () -> !LogCapture.drainErrors().isEmpty());
  }
}
