package io.pglock;

/**
 * An acquire would exceed the cap on locks held through one {@link PgLocks}
 * ({@link PgLocksBuilder#maxHeldLocks(int)}), or the server's lock table is full (SQLSTATE 53200).
 * The lock is not held. Release locks, or raise the cap if the server's lock table has room
 * ({@code max_locks_per_transaction} × ({@code max_connections} + {@code max_prepared_transactions})).
 */
public class LockCapacityException extends PgLockException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with the message given.
   *
   * @param message what went wrong and, where there is one, the fix
   */
  public LockCapacityException(String message) {
    super(message);
  }

  /**
   * An exception with the message given and the server's error.
   *
   * @param message what went wrong and, where there is one, the fix
   * @param cause the server's error
   */
  public LockCapacityException(String message, Throwable cause) {
    super(message, cause);
  }
}
