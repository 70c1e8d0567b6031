package io.pglock;

/**
 * The checked exception a {@link LockedWork} threw, passed on by
 * {@link SessionLock#run(java.time.Duration, LockedWork)} (unchecked exceptions and errors are
 * passed on as they are). The lock was released before this was thrown.
 */
public class LockedWorkException extends PgLockException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception carrying the work's.
   *
   * @param message which lock's work failed
   * @param cause what the work threw
   */
  public LockedWorkException(String message, Throwable cause) {
    super(message, cause);
  }
}
