package io.pglock;

/**
 * pglock could not talk to PostgreSQL for a lock operation: the connection could not be opened
 * or failed during the operation. A lock whose acquire failed this way is not held.
 */
public class LockSessionException extends PgLockException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with the message given and the underlying error.
   *
   * @param message what went wrong and, where there is one, the fix
   * @param cause the underlying error
   */
  public LockSessionException(String message, Throwable cause) {
    super(message, cause);
  }
}
