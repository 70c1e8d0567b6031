package io.pglock.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import org.postgresql.PGConnection;

/**
 * A connection a lock session borrowed from the user's {@code DataSource} for its whole life, and
 * what it takes to give it back exactly as it was found.
 *
 * <p>Why: the {@code DataSource} may be a pool (Spring Boot hands out a {@code HikariDataSource}).
 * A pooled connection that goes back with an advisory lock would give that lock to the pool's next
 * borrower; one that goes back with pglock's {@code idle_session_timeout} would be ended by the
 * server while it sits idle in the pool. So the settings pglock changes are read before they are
 * changed ({@link Sql#SETUP} reads each one just before it sets it), and an orderly end frees every
 * advisory lock and puts every setting back in one statement ({@link Sql#GIVE_BACK}) before the
 * connection is closed, which returns it to a pool. A session that ends in any other way may still
 * hold locks the client cannot see, so its connection is never given back: the pgjdbc connection
 * under any pool proxy is aborted first and the proxy closed after, which HikariCP treats as a
 * broken connection and discards (SQLSTATE 08003 on return; tested). Other pools discard it if they
 * validate connections on return or on borrow.
 *
 * <p>A plain (non-pooling) {@code DataSource} gets the same treatment; restoring the settings of a
 * connection about to be closed costs one statement at close.
 */
final class BorrowedConnection {
  /** As the {@code DataSource} gave it: maybe a pool's proxy. Statements run on this one. */
  final Connection connection;
  /** pgjdbc's own connection under any proxy: the one to abort. */
  private final Connection physical;
  private final boolean autoCommit;
  private final int networkTimeout;
  /** The values of {@link Sql#SESSION_SETTINGS} before setup changed them; null until read. */
  private volatile String[] originalSettings;
  /** Handed back to the {@code DataSource}: from then on it may be someone else's, never to abort. */
  private volatile boolean returned;

  private BorrowedConnection(Connection connection, Connection physical, boolean autoCommit, int networkTimeout) {
    this.connection = connection;
    this.physical = physical;
    this.autoCommit = autoCommit;
    this.networkTimeout = networkTimeout;
  }

  /** Remembers the connection's JDBC state, before anything is changed. */
  static BorrowedConnection of(Connection c) throws SQLException {
    Connection physical = (Connection) c.unwrap(PGConnection.class);
    return new BorrowedConnection(c, physical, c.getAutoCommit(), c.getNetworkTimeout());
  }

  /** Whether the connection came in a transaction-mode JDBC state (autocommit off). */
  boolean autoCommitWasOff() {
    return !autoCommit;
  }

  /**
   * Remembers the settings' values before setup changed them: the setup statement's row, which holds
   * them in its first
   * {@code Sql.SESSION_SETTINGS.size()} columns, and remembers those values.
   */
  void remember(ResultSet setupRow) throws SQLException {
    List<String> names = Sql.SESSION_SETTINGS;
    String[] values = new String[names.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = setupRow.getString(i + 1);
    }
    originalSettings = values;
  }

  /**
   * The orderly end: frees every advisory lock of the backend and puts every setting and the JDBC
   * state back as they were, then closes the connection (a pool gets it back clean).
   *
   * @throws SQLException if any of it fails; the caller then {@linkplain #discard() discards} it
   */
  void giveBack() throws SQLException {
    String[] values = originalSettings;
    if (values == null) {
      throw new SQLException("the connection's settings were never read; it cannot be given back");
    }
    try {
      runGiveBack(values);
    } catch (SQLException e) {
      if (!SqlErrors.state(e).equals(SqlErrors.QUERY_CANCELED)) {
        throw e;
      }
      // A cancel sent for a wait that ended just before (close() cancels every wait session's
      // statement) may land on this statement instead. The statement is idempotent: run it again.
      runGiveBack(values);
    }
    if (!autoCommit) {
      connection.setAutoCommit(false);
    }
    connection.setNetworkTimeout(Runnable::run, networkTimeout);
    returned = true;
    try {
      connection.close();
    } catch (SQLException e) {
      // A pool may already have taken it back (HikariCP recycles in a finally block): what is wrong
      // with it is the pool's to find now, and it must not be aborted under its next borrower.
    }
  }

  /**
   * Best effort, before a refused connection is discarded: puts the settings back, as behind a
   * transaction-mode pooler the backend they were set on serves other clients next.
   */
  void restoreSettingsQuietly() {
    String[] values = originalSettings;
    if (values == null) {
      return;
    }
    try (PreparedStatement ps = connection.prepareStatement(Sql.RESTORE_SETTINGS)) {
      for (int i = 0; i < values.length; i++) {
        ps.setString(i + 1, values[i]);
      }
      ps.execute();
    } catch (SQLException | RuntimeException e) {
      // the connection is discarded next either way
    }
  }

  private void runGiveBack(String[] values) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(Sql.GIVE_BACK)) {
      for (int i = 0; i < values.length; i++) {
        ps.setString(i + 1, values[i]);
      }
      ps.execute();
    }
  }

  /**
   * Drops the connection at once (the server frees every lock on it): aborts the pgjdbc connection,
   * then closes what the {@code DataSource} gave, so that a pool finds it broken and discards it
   * rather than lend it again. Never throws.
   */
  void discard() {
    if (returned) {
      return;
    }
    try {
      physical.abort(Runnable::run);
    } catch (SQLException | RuntimeException e) {
      closeQuietly(physical); // abort refused (a security manager): a close ends the backend as well
    }
    if (connection != physical) {
      closeQuietly(connection);
    }
  }

  /**
   * Gives back a connection that pglock changed nothing on (a failed check before setup): plain
   * close.
   */
  static void closeUnchanged(Connection c) {
    closeQuietly(c);
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException | RuntimeException ignored) {
      // already failing or already closed: nothing more can be done with it
    }
  }
}
