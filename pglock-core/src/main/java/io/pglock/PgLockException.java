package io.pglock;

/** The base of pglock's exceptions. Unchecked: most callers cannot recover from them in place. */
public class PgLockException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with a message that names the problem and, where there is one, the fix.
   *
   * @param message what went wrong and, where there is one, the fix
   */
  public PgLockException(String message) {
    super(message);
  }

  /**
   * As {@link #PgLockException(String)}, with the error that caused it.
   *
   * @param message what went wrong and, where there is one, the fix
   * @param cause the error that caused this one
   */
  public PgLockException(String message, Throwable cause) {
    super(message, cause);
  }
}
