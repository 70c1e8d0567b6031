package io.pglock.internal;

import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.LockMode;
import io.pglock.LockTimeoutException;
import io.pglock.PgLocksListener;
import io.pglock.SessionLock;
import io.pglock.internal.recording.NameRecorder;
import java.time.Duration;
import java.util.Optional;

/** A session lock: validates the call and delegates to the lock table. */
final class DefaultSessionLock implements SessionLock {
  /** The longest wait accepted: anything longer is a unit mistake, not an intent. */
  static final Duration MAX_WAIT = Duration.ofDays(366);

  private final DefaultPgLocks locks;
  private final LockKey key;
  private final LockMode mode;
  private final boolean fenced;
  private final boolean history;

  DefaultSessionLock(DefaultPgLocks locks, LockKey key, LockMode mode, boolean fenced, boolean history) {
    this.locks = locks;
    this.key = key;
    this.mode = mode;
    this.fenced = fenced;
    this.history = history;
    if (fenced) {
      locks.ensureFencing();
    }
    if (history) {
      locks.ensureHistory();
    }
  }

  @Override
  public SessionLock withHistory() {
    return history ? this : new DefaultSessionLock(locks, key, mode, fenced, true);
  }

  @Override
  public <T> T run(Duration timeout, io.pglock.LockedWork<T> work) throws InterruptedException {
    java.util.Objects.requireNonNull(work, "work");
    return LockedRun.run(this, (DefaultLockHandle) acquire(timeout), history ? locks.history() : null, work);
  }

  @Override
  public SessionLock withFencing() {
    if (fenced) {
      return this;
    }
    if (mode != LockMode.EXCLUSIVE) {
      throw new UnsupportedOperationException("fencing tokens are for exclusive locks; " + key
          + " is " + mode.name().toLowerCase(java.util.Locale.ROOT));
    }
    return new DefaultSessionLock(locks, key, mode, true, history);
  }

  /** This node's name, for the history. */
  String node() {
    return locks.config().nodeName();
  }

  @Override
  public boolean fenced() {
    return fenced;
  }

  @Override
  public LockKey key() {
    return key;
  }

  @Override
  public LockMode mode() {
    return mode;
  }

  @Override
  public Optional<LockHandle> tryAcquire() {
    locks.ensureOpen();
    try {
      return Optional.ofNullable(attempt(LockTable.NO_WAIT, false));
    } catch (InterruptedException e) {
      throw new AssertionError("an uninterruptible try was interrupted", e);
    }
  }

  @Override
  public Optional<LockHandle> tryAcquire(Duration timeout) throws InterruptedException {
    long nanos = checkTimeout(timeout);
    locks.ensureOpen();
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before acquiring " + key);
    }
    return Optional.ofNullable(attempt(nanos, true));
  }

  @Override
  public LockHandle acquire(Duration timeout) throws InterruptedException {
    long start = System.nanoTime();
    Optional<LockHandle> h = tryAcquire(timeout);
    if (h.isEmpty()) {
      throw new LockTimeoutException("timed out after " + Duration.ofNanos(System.nanoTime() - start).toMillis()
          + " ms waiting for " + mode.name().toLowerCase(java.util.Locale.ROOT) + " lock " + key
          + " (node " + locks.config().nodeName() + ", " + locks.heldLocks() + " locks held here); "
          + "another holder has it: see pg_locks, or wait longer");
    }
    return h.get();
  }

  @Override
  public LockHandle acquire() throws InterruptedException {
    locks.ensureOpen();
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before acquiring " + key);
    }
    return attempt(LockTable.FOREVER, true);
  }

  @Override
  public LockHandle acquireUninterruptibly() {
    locks.ensureOpen();
    try {
      return attempt(LockTable.FOREVER, false);
    } catch (InterruptedException e) {
      throw new AssertionError("an uninterruptible acquire was interrupted", e);
    }
  }

  /**
   * One acquire attempt, told to the listener if there is one (without one, it costs a null check).
   *
   * @param timeoutNanos {@link LockTable#NO_WAIT} for a try, else a wait bound or {@link LockTable#FOREVER}
   * @return the handle, or null if not acquired
   */
  private DefaultLockHandle attempt(long timeoutNanos, boolean interruptible) throws InterruptedException {
    PgLocksListener l = locks.listener();
    if (l == null) {
      return acquireOnce(timeoutNanos, interruptible);
    }
    long start = System.nanoTime();
    PgLocksListener.AcquireOutcome outcome = PgLocksListener.AcquireOutcome.FAILED;
    try {
      DefaultLockHandle h = acquireOnce(timeoutNanos, interruptible);
      outcome = h != null ? PgLocksListener.AcquireOutcome.ACQUIRED : PgLocksListener.AcquireOutcome.NOT_ACQUIRED;
      return h;
    } finally {
      l.acquireEnded(locks.config().namespace(), mode,
          timeoutNanos == LockTable.NO_WAIT ? PgLocksListener.AcquireKind.TRY : PgLocksListener.AcquireKind.WAIT,
          outcome, System.nanoTime() - start);
    }
  }

  private DefaultLockHandle acquireOnce(long timeoutNanos, boolean interruptible) throws InterruptedException {
    if (timeoutNanos == LockTable.NO_WAIT) {
      return locks.table().acquire(key, mode, LockTable.NO_WAIT, false, fenced);
    }
    return waitNoted(timeoutNanos, interruptible);
  }

  /**
   * A blocking acquire, noted while it waits so that a long wait shows by name in the views. (A grant
   * is not noted: the name recorder reads what is held from the lock table.)
   */
  private DefaultLockHandle waitNoted(long timeoutNanos, boolean interruptible) throws InterruptedException {
    NameRecorder.Wait w = locks.waitBegins(key);
    try {
      return locks.table().acquire(key, mode, timeoutNanos, interruptible, fenced);
    } finally {
      if (w != null) {
        w.end();
      }
    }
  }

  static long checkTimeout(Duration timeout) {
    if (timeout == null) {
      throw new IllegalArgumentException("timeout must not be null; use acquire() to wait without limit");
    }
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative: " + timeout);
    }
    if (timeout.compareTo(MAX_WAIT) > 0) {
      throw new IllegalArgumentException("timeout " + timeout + " is longer than " + MAX_WAIT
          + "; use acquire() to wait without limit");
    }
    return Math.max(1, timeout.toNanos());
  }

  @Override
  public String toString() {
    return "SessionLock[" + key + " " + mode + (fenced ? " fenced" : "") + "]";
  }
}
