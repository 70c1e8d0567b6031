package io.pglock;

import java.time.Duration;

/**
 * Transaction-scoped advisory locks on the caller's own {@link java.sql.Connection}, inside the
 * caller's transaction ({@code pg_advisory_xact_lock}). PostgreSQL releases them when the
 * transaction commits or rolls back; there is no handle and no early release.
 *
 * <p>This is the mode for the rate-limit pattern (lock per user id, count, insert, commit) and the
 * only mode that is safe through a pooler in transaction mode. The connection must have
 * autocommit off. Waits run under a savepoint, so a timeout or a deadlock leaves the caller's
 * transaction usable; the connection's {@code lock_timeout} is restored afterwards.
 *
 * <p>Not thread-safe, like the connection it wraps; use it from the thread that runs the
 * transaction. Every method throws {@link IllegalStateException} if autocommit is on and
 * {@link LockSessionException} if a statement fails for another reason.
 */
public interface TransactionLocks {

  /** Takes an exclusive lock on the name (in the {@link PgLocks} namespace) if it is free now. */
  boolean tryLock(String name);

  /** Takes the lock in the given mode if it is free now. */
  boolean tryLock(LockKey key, LockMode mode);

  /**
   * Waits up to the timeout for an exclusive lock on the name.
   *
   * @throws LockTimeoutException if the timeout passed first
   * @throws LockDeadlockException if PostgreSQL chose this wait to break a deadlock
   * @throws InterruptedException if interrupted while waiting
   */
  void lock(String name, Duration timeout) throws InterruptedException;

  /** As {@link #lock(String, Duration)}, for any key and mode. */
  void lock(LockKey key, LockMode mode, Duration timeout) throws InterruptedException;

  /** Waits without limit (but interruptibly) for the lock in the given mode. */
  void lock(LockKey key, LockMode mode) throws InterruptedException;
}
