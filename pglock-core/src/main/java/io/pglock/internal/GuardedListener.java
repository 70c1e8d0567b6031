package io.pglock.internal;

import io.pglock.LockMode;
import io.pglock.LossCause;
import io.pglock.PgLocksListener;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A user's {@link PgLocksListener} behind a guard: whatever it throws is caught and logged (the
 * first time at WARN, later at DEBUG), never propagated into pglock. Callers keep it as a nullable
 * field and test for null, so that an instance without a listener pays one null check.
 */
public final class GuardedListener implements PgLocksListener {
  private static final Logger log = LoggerFactory.getLogger(GuardedListener.class);
  private final PgLocksListener listener;
  private final AtomicBoolean warned = new AtomicBoolean();

  private GuardedListener(PgLocksListener listener) {
    this.listener = listener;
  }

  /**
   * The listener behind a guard.
   *
   * @param listener the user's listener, or null
   * @return the guarded listener, or null if there is none
   */
  public static PgLocksListener of(PgLocksListener listener) {
    if (listener == null || listener instanceof GuardedListener) {
      return listener;
    }
    return new GuardedListener(listener);
  }

  @Override
  public void acquireEnded(String namespace, LockMode mode, AcquireKind kind, AcquireOutcome outcome, long nanos) {
    try {
      listener.acquireEnded(namespace, mode, kind, outcome, nanos);
    } catch (RuntimeException | Error e) {
      threw("acquireEnded", e);
    }
  }

  @Override
  public void lockLost(String namespace, LossCause cause) {
    try {
      listener.lockLost(namespace, cause);
    } catch (RuntimeException | Error e) {
      threw("lockLost", e);
    }
  }

  @Override
  public void leadershipChanged(String namespace, String election, boolean leader) {
    try {
      listener.leadershipChanged(namespace, election, leader);
    } catch (RuntimeException | Error e) {
      threw("leadershipChanged", e);
    }
  }

  private void threw(String method, Throwable e) {
    if (warned.compareAndSet(false, true)) {
      log.warn("the PgLocksListener {} threw from {}; ignored (later failures are logged at DEBUG)", listener,
          method, e);
    } else {
      log.debug("the PgLocksListener {} threw from {}; ignored", listener, method, e);
    }
  }

  @Override
  public String toString() {
    return "Guarded[" + listener + "]";
  }
}
