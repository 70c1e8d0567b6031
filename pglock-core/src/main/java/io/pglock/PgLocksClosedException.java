package io.pglock;

/** A {@link PgLocks} was used after {@link PgLocks#close()}. Build a new one. */
public class PgLocksClosedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with the message given.
   *
   * @param message what went wrong and, where there is one, the fix
   */
  public PgLocksClosedException(String message) {
    super(message);
  }
}
