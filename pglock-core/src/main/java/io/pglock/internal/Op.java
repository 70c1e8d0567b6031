package io.pglock.internal;

import io.pglock.LockMode;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * One server operation queued on a lock session: a try-lock or unlock (run in a batch) or a blocking
 * wait (run alone on a wait session). Completed exactly once; a waiter may abandon it first, in
 * which case a lock it granted is released by the session, never handed to anyone.
 */
final class Op {
  static final int TRY_EXCLUSIVE = 0;
  static final int TRY_SHARED = 1;
  static final int UNLOCK_EXCLUSIVE = 2;
  static final int UNLOCK_SHARED = 3;
  static final int WAIT_EXCLUSIVE = 4;
  static final int WAIT_SHARED = 5;
  /** Asks whether an exclusive request for the key waits on the server; answers true if one does. */
  static final int WRITER_WAITING = 6;

  private static final int PENDING = 0;
  private static final int GRANTED = 1;
  private static final int REFUSED = 2;
  private static final int FAILED = 3;
  private static final int ABANDONED = 4;

  final int action;
  final ServerKey key;
  /** For waits: the longest the server should wait (lock_timeout), in milliseconds; 0 means none. */
  final long waitMillis;
  /** For unlocks: run by the session after the batch, with whether the server had the lock. */
  final Consumer<Boolean> onDone;
  /** An exclusive try or wait that takes the lock's next fencing token with the grant. */
  final boolean fenced;
  /** The fencing token that came with the grant; written before the state, read after it. */
  private volatile long token;

  private final AtomicInteger state = new AtomicInteger(PENDING);
  private volatile Thread waiter;
  private volatile RuntimeException failure;
  /** Run once the session is done with the op (answered, failed, or dropped); guarded by this. */
  private Runnable onSettled;
  private boolean settled;

  private Op(int action, ServerKey key, long waitMillis, Consumer<Boolean> onDone, boolean fenced) {
    this.action = action;
    this.key = key;
    this.waitMillis = waitMillis;
    this.onDone = onDone;
    this.fenced = fenced;
  }

  static Op tryLock(ServerKey key, LockMode mode) {
    return tryLock(key, mode, false);
  }

  /** A try-lock; a fenced one (exclusive only) takes the lock's next fencing token with the grant. */
  static Op tryLock(ServerKey key, LockMode mode, boolean fenced) {
    return new Op(mode == LockMode.SHARED ? TRY_SHARED : TRY_EXCLUSIVE, key, 0, null, fenced);
  }

  static Op unlock(ServerKey key, LockMode mode, Consumer<Boolean> onDone) {
    return new Op(mode == LockMode.SHARED ? UNLOCK_SHARED : UNLOCK_EXCLUSIVE, key, 0, onDone, false);
  }

  /** A blocking wait; a fenced one (exclusive only) takes the lock's next fencing token with the grant. */
  static Op waitLock(ServerKey key, LockMode mode, long waitMillis, boolean fenced) {
    return new Op(mode == LockMode.SHARED ? WAIT_SHARED : WAIT_EXCLUSIVE, key, waitMillis, null, fenced);
  }

  boolean isWait() {
    return action == WAIT_EXCLUSIVE || action == WAIT_SHARED;
  }

  /** Runs as a statement of its own, not in a batch of try-locks and unlocks. */
  boolean runsAlone() {
    return action >= WAIT_EXCLUSIVE;
  }

  static Op writerWaiting(ServerKey key) {
    return new Op(WRITER_WAITING, key, 0, null, false);
  }

  boolean isUnlock() {
    return action == UNLOCK_EXCLUSIVE || action == UNLOCK_SHARED;
  }

  boolean shared() {
    return action == TRY_SHARED || action == UNLOCK_SHARED || action == WAIT_SHARED;
  }

  /**
   * Records the server's answer.
   *
   * @return false if the waiter had abandoned the op: a granted lock must then be released
   */
  boolean complete(boolean granted) {
    return complete(granted, 0);
  }

  /**
   * Records the server's answer to a fenced op: granted with this token (positive), or not (0).
   *
   * @return false if the waiter had abandoned the op: a granted lock must then be released
   */
  boolean completeFenced(long token) {
    return complete(token > 0, token);
  }

  private boolean complete(boolean granted, long grantedToken) {
    token = grantedToken;
    boolean won = state.compareAndSet(PENDING, granted ? GRANTED : REFUSED);
    LockSupport.unpark(waiter);
    if (onDone != null) {
      onDone.accept(granted);
    }
    settle();
    return won;
  }

  /** Fails the op (the session failed); a no-op if it was already completed or abandoned. */
  void fail(RuntimeException error) {
    failure = error;
    state.compareAndSet(PENDING, FAILED);
    LockSupport.unpark(waiter);
    settle();
  }

  /**
   * Runs the action once the session is done with this op: at once if it already is. A waiter that
   * abandoned a blocking wait uses it to give the wait session back only when the statement has
   * ended, so that the next waiter never queues behind a statement that may be stalled.
   */
  void whenSettled(Runnable action) {
    synchronized (this) {
      if (!settled) {
        onSettled = action;
        return;
      }
    }
    action.run();
  }

  /** The session is done with the op: it was answered, failed, or dropped unsent. */
  void settle() {
    Runnable action;
    synchronized (this) {
      if (settled) {
        return;
      }
      settled = true;
      action = onSettled;
      onSettled = null;
    }
    if (action != null) {
      action.run();
    }
  }

  /** Gives up on the op. @return false if it was completed first (the waiter must take the result) */
  boolean abandon() {
    return state.compareAndSet(PENDING, ABANDONED);
  }

  boolean isDone() {
    return state.get() != PENDING;
  }

  /**
   * Waits for the answer until the deadline ({@link Long#MAX_VALUE}: no limit), ignoring interrupts,
   * which stay set on return: used for the short batched operations, which complete within a round
   * trip or when their session fails.
   *
   * @return true once the op is done (read {@link #result()}); false if the deadline passed first
   */
  boolean awaitUninterruptibly(long deadlineNanos) {
    waiter = Thread.currentThread();
    boolean interrupted = false;
    try {
      while (state.get() == PENDING) {
        if (deadlineNanos == Long.MAX_VALUE) {
          LockSupport.park(this);
        } else {
          long left = deadlineNanos - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          LockSupport.parkNanos(this, left);
        }
        interrupted |= Thread.interrupted();
      }
      return true;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Waits for the answer until the deadline or an interrupt.
   *
   * @return true once the op is done (read {@link #result()}); false if the deadline passed or the
   *     thread was interrupted first (the interrupt stays set)
   */
  boolean awaitUntil(long deadlineNanos) {
    waiter = Thread.currentThread();
    while (state.get() == PENDING) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0 || Thread.currentThread().isInterrupted()) {
        return state.get() != PENDING;
      }
      LockSupport.parkNanos(this, left);
    }
    return true;
  }

  /** The fencing token of a granted fenced op (0 for any other op); read after {@link #result()}. */
  long token() {
    return token;
  }

  /** The answer of a done op. @throws RuntimeException the failure, if the session failed */
  boolean result() {
    int s = state.get();
    if (s == FAILED) {
      throw failure;
    }
    return s == GRANTED;
  }
}
