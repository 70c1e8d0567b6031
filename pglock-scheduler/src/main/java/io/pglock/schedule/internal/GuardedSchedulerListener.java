package io.pglock.schedule.internal;

import io.pglock.schedule.RunKind;
import io.pglock.schedule.RunState;
import io.pglock.schedule.SchedulerListener;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A user's {@link SchedulerListener} behind a guard: what it throws is logged (first at WARN), never propagated. */
final class GuardedSchedulerListener implements SchedulerListener {
  private static final Logger log = LoggerFactory.getLogger(GuardedSchedulerListener.class);
  private final SchedulerListener listener;
  private final AtomicBoolean warned = new AtomicBoolean();

  private GuardedSchedulerListener(SchedulerListener listener) {
    this.listener = listener;
  }

  /** The listener behind a guard; null for null. */
  static SchedulerListener of(SchedulerListener listener) {
    return listener == null || listener instanceof GuardedSchedulerListener ? listener
        : new GuardedSchedulerListener(listener);
  }

  @Override
  public void runEnded(String namespace, String task, RunKind kind, RunState outcome, long durationNanos,
      long latenessNanos) {
    try {
      listener.runEnded(namespace, task, kind, outcome, durationNanos, latenessNanos);
    } catch (RuntimeException | Error e) {
      if (warned.compareAndSet(false, true)) {
        log.warn("the SchedulerListener {} threw from runEnded; ignored (later failures are logged at DEBUG)",
            listener, e);
      } else {
        log.debug("the SchedulerListener {} threw from runEnded; ignored", listener, e);
      }
    }
  }
}
