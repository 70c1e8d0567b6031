package io.pglock;

/**
 * PostgreSQL found a deadlock (SQLSTATE 40P01) while this acquire waited, and chose this waiter
 * to break it. The lock is not held; the locks acquired earlier are still held, and the caller
 * should release them (or roll back) and retry in a consistent order.
 */
public class LockDeadlockException extends PgLockException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with the message given and the server's error.
   *
   * @param message what went wrong and, where there is one, the fix
   * @param cause the server's error (SQLSTATE 40P01)
   */
  public LockDeadlockException(String message, Throwable cause) {
    super(message, cause);
  }
}
