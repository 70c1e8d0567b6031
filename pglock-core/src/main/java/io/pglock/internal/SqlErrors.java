package io.pglock.internal;

import java.sql.SQLException;

/**
 * The SQLSTATEs pglock acts on, and how it classifies a failed statement. Public (with
 * {@link #state}, {@link #describe} and {@link #INSUFFICIENT_PRIVILEGE}) only for the sub-packages of
 * {@code io.pglock.internal}; not API.
 */
public final class SqlErrors {
  private SqlErrors() {}

  static final String LOCK_NOT_AVAILABLE = "55P03";
  static final String QUERY_CANCELED = "57014";
  static final String DEADLOCK = "40P01";
  static final String OUT_OF_SHARED_MEMORY = "53200";
  /** The role lacks a privilege (here: to create the schema). */
  public static final String INSUFFICIENT_PRIVILEGE = "42501";

  /** The error's SQLSTATE, or the empty string if it has none. */
  public static String state(SQLException e) {
    String state = e.getSQLState();
    return state == null ? "" : state;
  }

  /**
   * True if the error ended the connection: connection exceptions (08), the server shutting down or
   * an administrator terminating the backend (57P01..57P05), or a closed connection.
   */
  static boolean isConnectionLoss(SQLException e) {
    String state = state(e);
    return state.startsWith("08") || state.startsWith("57P") || state.isEmpty();
  }

  /** A write refused because the transaction is read-only: on a standby, or a read-only connection. */
  public static final String READ_ONLY_TRANSACTION = "25006";

  /**
   * The error's SQLSTATE and message, for exception messages; for a write refused as read-only, also
   * the likely cause (a standby after a failover) and the fix.
   */
  public static String describe(SQLException e) {
    String described = "SQLSTATE " + state(e) + ": " + e.getMessage();
    if (state(e).equals(READ_ONLY_TRANSACTION)) {
      described += " (the connection is read-only: the DataSource reached a standby, for example the former "
          + "primary after a failover, or was set read-only; pglock writes on the primary: use pgjdbc's multi-host "
          + "URL with targetServerType=primary, see docs/failover.md)";
    }
    return described;
  }
}
