package io.pglock;

import java.time.Duration;

/**
 * Transaction-scoped advisory locks on the caller's own {@link java.sql.Connection}, inside the
 * caller's transaction ({@code pg_advisory_xact_lock}). PostgreSQL releases them when the
 * transaction commits or rolls back; there is no handle and no early release.
 *
 * <p>This is the mode for the rate-limit pattern (lock per user id, count, insert, commit) and the
 * only mode that is safe through a pooler in transaction mode. The connection must have
 * autocommit off.
 *
 * <p><b>Methods.</b> Each exists by name (in the {@link PgLocks} namespace, as
 * {@link PgLocks#lock(String)}) and by {@link LockKey}; the mode is {@link LockMode#EXCLUSIVE}
 * unless given. As with {@link SessionLock}: {@code tryLock} returns {@code false} when the lock
 * is not granted (now, or within the timeout); {@code lock} with a timeout throws
 * {@link LockTimeoutException} instead; {@code lock} without a timeout waits as long as it takes,
 * unless interrupted. A transaction may take the same key more than once (PostgreSQL stacks
 * transaction locks; all end with the transaction).
 *
 * <p><b>State left.</b> Waits run under a savepoint: a timeout, an interrupt or a deadlock rolls
 * back only that savepoint, so the caller's transaction stays usable and holds exactly what it held
 * before, and the connection's {@code lock_timeout} is restored afterwards.
 *
 * <p><b>Interrupts</b> are never lost: a wait ends with {@link InterruptedException} (the flag
 * cleared, nothing new held) if the thread is interrupted before or while it waits. If the wait
 * ended otherwise as the interrupt came, the call reports that outcome and leaves the flag set, as
 * session locks do: granted returns normally, a timeout returns {@code false} or throws
 * {@link LockTimeoutException}, a failure throws its exception. The wait statement is cancelled (a PostgreSQL cancel request, sent from
 * a thread of its own and repeated while the thread stays interrupted and blocked); no cancel
 * reaches a statement the caller runs after the call returns. The immediate {@code tryLock}s run
 * one short statement and do not look at the flag. On a virtual thread (Java 21+), where an
 * interrupt closes a socket the thread is blocked on, the statements of a wait run on a platform
 * thread while the caller waits, so the connection survives the interrupt; a statement the caller
 * itself runs with its interrupt flag set would still close it (JDK behaviour).
 *
 * <p>Not thread-safe, like the connection it wraps; use it from the thread that runs the
 * transaction. Every method throws {@link IllegalStateException} if autocommit is on or the
 * transaction is already aborted, {@link PgLocksClosedException} if the {@code PgLocks} is closed,
 * {@link LockCapacityException} if the server's lock table is full, and
 * {@link LockSessionException} if a statement fails for another reason (the transaction may then
 * be aborted; roll it back). A timeout that is negative, {@code null} or longer than a year is an
 * {@link IllegalArgumentException}.
 */
public interface TransactionLocks {

  /**
   * Takes an exclusive lock on the name if it is free now; never waits.
   *
   * @param name the lock name, in the {@link PgLocks} namespace
   * @return true if the transaction now holds the lock
   */
  boolean tryLock(String name);

  /**
   * Takes the lock on the name in the given mode (for example {@link LockMode#SHARED}) if it is
   * free now; never waits.
   *
   * @param name the lock name, in the {@link PgLocks} namespace
   * @param mode {@link LockMode#SHARED} or {@link LockMode#EXCLUSIVE}
   * @return true if the transaction now holds the lock
   */
  boolean tryLock(String name, LockMode mode);

  /**
   * Takes the lock on the key in the given mode if it is free now; never waits.
   *
   * @param key the key
   * @param mode {@link LockMode#SHARED} or {@link LockMode#EXCLUSIVE}
   * @return true if the transaction now holds the lock
   */
  boolean tryLock(LockKey key, LockMode mode);

  /**
   * Waits up to the timeout for an exclusive lock on the name.
   *
   * @param name the lock name, in the {@link PgLocks} namespace
   * @param timeout how long to wait at most; zero means one try
   * @return true if granted; false if the timeout passed first (the transaction is still usable and
   *     holds what it held before)
   * @throws InterruptedException if interrupted before or while waiting (nothing new is held)
   * @throws LockDeadlockException if PostgreSQL chose this wait to break a deadlock
   */
  boolean tryLock(String name, Duration timeout) throws InterruptedException;

  /**
   * As {@link #tryLock(String, Duration)}, in the given mode.
   *
   * @param name the lock name, in the {@link PgLocks} namespace
   * @param mode {@link LockMode#SHARED} or {@link LockMode#EXCLUSIVE}
   * @param timeout how long to wait at most; zero means one try
   * @return true if granted; false if the timeout passed first
   * @throws InterruptedException if interrupted before or while waiting (nothing new is held)
   * @throws LockDeadlockException if PostgreSQL chose this wait to break a deadlock
   */
  boolean tryLock(String name, LockMode mode, Duration timeout) throws InterruptedException;

  /**
   * As {@link #tryLock(String, Duration)}, for any key and mode.
   *
   * @param key the key
   * @param mode {@link LockMode#SHARED} or {@link LockMode#EXCLUSIVE}
   * @param timeout how long to wait at most; zero means one try
   * @return true if granted; false if the timeout passed first
   * @throws InterruptedException if interrupted before or while waiting (nothing new is held)
   * @throws LockDeadlockException if PostgreSQL chose this wait to break a deadlock
   */
  boolean tryLock(LockKey key, LockMode mode, Duration timeout) throws InterruptedException;

  /**
   * Waits as long as it takes, unless interrupted, for an exclusive lock on the name.
   *
   * @param name the lock name, in the {@link PgLocks} namespace
   * @throws InterruptedException if interrupted before or while waiting (nothing new is held)
   * @throws LockDeadlockException if PostgreSQL chose this wait to break a deadlock
   */
  void lock(String name) throws InterruptedException;

  /**
   * As {@link #lock(String)}, in the given mode.
   *
   * @param name the lock name, in the {@link PgLocks} namespace
   * @param mode {@link LockMode#SHARED} or {@link LockMode#EXCLUSIVE}
   * @throws InterruptedException if interrupted before or while waiting (nothing new is held)
   * @throws LockDeadlockException if PostgreSQL chose this wait to break a deadlock
   */
  void lock(String name, LockMode mode) throws InterruptedException;

  /**
   * As {@link #lock(String)}, for any key and mode.
   *
   * @param key the key
   * @param mode {@link LockMode#SHARED} or {@link LockMode#EXCLUSIVE}
   * @throws InterruptedException if interrupted before or while waiting (nothing new is held)
   * @throws LockDeadlockException if PostgreSQL chose this wait to break a deadlock
   */
  void lock(LockKey key, LockMode mode) throws InterruptedException;

  /**
   * Waits up to the timeout for an exclusive lock on the name.
   *
   * @param name the lock name, in the {@link PgLocks} namespace
   * @param timeout how long to wait at most; zero means one try
   * @throws LockTimeoutException if the timeout passed first (the transaction is still usable and
   *     holds what it held before)
   * @throws InterruptedException if interrupted before or while waiting (nothing new is held)
   * @throws LockDeadlockException if PostgreSQL chose this wait to break a deadlock
   */
  void lock(String name, Duration timeout) throws InterruptedException;

  /**
   * As {@link #lock(String, Duration)}, in the given mode.
   *
   * @param name the lock name, in the {@link PgLocks} namespace
   * @param mode {@link LockMode#SHARED} or {@link LockMode#EXCLUSIVE}
   * @param timeout how long to wait at most; zero means one try
   * @throws LockTimeoutException if the timeout passed first
   * @throws InterruptedException if interrupted before or while waiting (nothing new is held)
   * @throws LockDeadlockException if PostgreSQL chose this wait to break a deadlock
   */
  void lock(String name, LockMode mode, Duration timeout) throws InterruptedException;

  /**
   * As {@link #lock(String, Duration)}, for any key and mode.
   *
   * @param key the key
   * @param mode {@link LockMode#SHARED} or {@link LockMode#EXCLUSIVE}
   * @param timeout how long to wait at most; zero means one try
   * @throws LockTimeoutException if the timeout passed first
   * @throws InterruptedException if interrupted before or while waiting (nothing new is held)
   * @throws LockDeadlockException if PostgreSQL chose this wait to break a deadlock
   */
  void lock(LockKey key, LockMode mode, Duration timeout) throws InterruptedException;
}
