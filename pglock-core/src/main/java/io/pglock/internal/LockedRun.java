package io.pglock.internal;

import io.pglock.LockKey;
import io.pglock.LockNotHeldException;
import io.pglock.LockedWork;
import io.pglock.LockedWorkException;
import io.pglock.LossCause;
import io.pglock.internal.recording.HistoryWriter;
import io.pglock.internal.recording.HoldRecord;
import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@link io.pglock.SessionLock#run}: the work between an acquire and a release, and its record in the
 * history. Every way out releases the lock first, then records how the hold ended, then reports.
 */
final class LockedRun {
  private LockedRun() {}

  /**
   * Runs the work on a held lock and releases it.
   *
   * @param history where the hold is recorded, or null for none
   */
  static <T> T run(DefaultSessionLock lock, DefaultLockHandle handle, HistoryWriter history, LockedWork<T> work)
      throws InterruptedException {
    HoldRecord open = history == null ? null : opened(lock, handle);
    if (open != null) {
      history.submit(open);
    }
    T result = null;
    Throwable failure = null;
    try {
      result = work.run(handle);
    } catch (Throwable t) { // recorded, then passed on as it is (or wrapped, if checked)
      failure = t;
    }
    LossCause lost = handle.lossCause();
    handle.close();
    if (open != null) {
      String outcome = failure != null ? "failed" : lost != null ? "lost" : "released";
      history.submit(open.ended(Instant.now(), outcome, lost == null ? null : lost.name(), failure));
    }
    if (failure instanceof RuntimeException) {
      throw (RuntimeException) failure;
    }
    if (failure instanceof Error) {
      throw (Error) failure;
    }
    if (failure instanceof InterruptedException) {
      throw (InterruptedException) failure;
    }
    if (failure != null) {
      throw new LockedWorkException("the work under " + lock.key() + " failed: " + failure, failure);
    }
    if (lost != null) {
      throw new LockNotHeldException(lock.key() + " was lost while the work ran (" + lost + "): the work completed, "
          + "but not under the lock; its result was dropped. Make the work idempotent, or check "
          + "handle.isHeld() (or a fencing token) before each step that must not run without the lock");
    }
    return result;
  }

  private static HoldRecord opened(DefaultSessionLock lock, DefaultLockHandle handle) {
    LockKey key = lock.key();
    LockSession session = handle.session();
    long id = ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE;
    return new HoldRecord(id, key.namespace() == null ? "" : key.namespace(),
        key.name() == null ? key.toString() : key.name(), ServerKey.of(key).value(), lock.node(), session.pid(), session.backendStart,
        Instant.now(), null, "open", null, null, null, null);
  }
}
