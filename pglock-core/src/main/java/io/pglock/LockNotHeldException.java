package io.pglock;

/**
 * A handle was used after it stopped holding its lock: it was closed, or the lock was lost. Take a
 * new handle; a handle never holds its lock again.
 */
public class LockNotHeldException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with the message given.
   *
   * @param message what went wrong and, where there is one, the fix
   */
  public LockNotHeldException(String message) {
    super(message);
  }
}
