package io.pglock;

/**
 * The database role lacks a privilege pglock needs (SQLSTATE 42501). The message names the role,
 * the privilege and the statement that grants it. See the privileges section of docs/locks.md.
 */
public class MissingPrivilegeException extends PgLockException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with the message given and the server's error.
   *
   * @param message what went wrong and, where there is one, the fix
   * @param cause the server's error (SQLSTATE 42501)
   */
  public MissingPrivilegeException(String message, Throwable cause) {
    super(message, cause);
  }
}
