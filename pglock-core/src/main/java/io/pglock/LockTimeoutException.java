package io.pglock;

/**
 * An acquire did not get its lock within its timeout. Nothing is held on the caller's behalf
 * afterwards: if the server granted the lock just as the wait timed out, pglock released it.
 */
public class LockTimeoutException extends PgLockException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with the message given.
   *
   * @param message what went wrong and, where there is one, the fix
   */
  public LockTimeoutException(String message) {
    super(message);
  }
}
