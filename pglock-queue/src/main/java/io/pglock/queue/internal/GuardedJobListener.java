package io.pglock.queue.internal;

import io.pglock.queue.JobListener;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A user's {@link JobListener} behind a guard: what it throws is logged (first at WARN), never propagated. */
final class GuardedJobListener implements JobListener {
  private static final Logger log = LoggerFactory.getLogger(GuardedJobListener.class);
  private final JobListener listener;
  private final AtomicBoolean warned = new AtomicBoolean();

  private GuardedJobListener(JobListener listener) {
    this.listener = listener;
  }

  /** The listener behind a guard; null for null. */
  static JobListener of(JobListener listener) {
    return listener == null || listener instanceof GuardedJobListener ? listener : new GuardedJobListener(listener);
  }

  @Override
  public void attemptEnded(String queue, String kind, AttemptResult result, long durationNanos) {
    try {
      listener.attemptEnded(queue, kind, result, durationNanos);
    } catch (RuntimeException | Error e) {
      if (warned.compareAndSet(false, true)) {
        log.warn("the JobListener {} threw from attemptEnded; ignored (later failures are logged at DEBUG)",
            listener, e);
      } else {
        log.debug("the JobListener {} threw from attemptEnded; ignored", listener, e);
      }
    }
  }
}
