package io.pglock;

/**
 * The database behind a {@link javax.sql.DataSource} or {@link java.sql.Connection} cannot carry
 * pglock's locks: it is not PostgreSQL, it is too old (pglock needs 14 or newer for
 * {@code idle_session_timeout}), or it sits behind a pooler in transaction mode (PgBouncer), where
 * session locks would silently be shared with other clients.
 */
public class UnsupportedDatabaseException extends PgLockException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with the message given.
   *
   * @param message what went wrong and, where there is one, the fix
   */
  public UnsupportedDatabaseException(String message) {
    super(message);
  }

  /**
   * An exception with the message given and the underlying error.
   *
   * @param message what went wrong and, where there is one, the fix
   * @param cause the underlying error
   */
  public UnsupportedDatabaseException(String message, Throwable cause) {
    super(message, cause);
  }
}
