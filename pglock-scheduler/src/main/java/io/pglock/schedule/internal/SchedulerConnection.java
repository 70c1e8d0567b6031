package io.pglock.schedule.internal;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler's one connection for its own statements (claims, finishes, flags): borrowed from
 * the data source when first needed and kept, in autocommit, with a network timeout so that a
 * silent network fails a statement instead of hanging it; replaced after a connection failure;
 * given back as it came. Statements from several threads take turns.
 */
final class SchedulerConnection implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SchedulerConnection.class);

  /** One statement's work. */
  @FunctionalInterface
  interface Work<T> {
    T apply(Connection c) throws SQLException;
  }

  private final DataSource dataSource;
  private final int networkTimeoutMillis;
  private Connection connection; // guarded by this
  private boolean autoCommitBefore; // guarded by this
  private int networkTimeoutBefore; // guarded by this
  private boolean closed; // guarded by this: no connection is borrowed again

  SchedulerConnection(DataSource dataSource, int networkTimeoutMillis) {
    this.dataSource = dataSource;
    this.networkTimeoutMillis = networkTimeoutMillis;
  }

  synchronized <T> T with(Work<T> work) throws SQLException {
    if (closed) {
      throw new SQLException("the scheduler is closed", "08003");
    }
    if (connection == null) {
      Connection c = dataSource.getConnection();
      try {
        autoCommitBefore = c.getAutoCommit();
        networkTimeoutBefore = c.getNetworkTimeout();
        c.setAutoCommit(true);
        c.setNetworkTimeout(Runnable::run, networkTimeoutMillis);
      } catch (SQLException | RuntimeException e) {
        c.close();
        throw e;
      }
      connection = c;
    }
    try {
      return work.apply(connection);
    } catch (SQLException e) {
      if (broken(e)) {
        discard();
      }
      throw e;
    }
  }

  /** A connection failure, the server going away or a standby: the connection is not to be used again. */
  private boolean broken(SQLException e) {
    String state = e.getSQLState() == null ? "" : e.getSQLState();
    try {
      // 25006: a read-only connection, a standby most likely; another borrow may reach the new primary
      return state.startsWith("08") || state.startsWith("57P") || state.equals("25006") || connection.isClosed();
    } catch (SQLException closedCheck) {
      return true;
    }
  }

  private void discard() {
    Connection c = connection;
    connection = null;
    try {
      c.abort(Runnable::run); // never back to a pool: it may be half-dead
    } catch (SQLException | RuntimeException e) {
      log.debug("aborting the scheduler's connection failed: {}", e.toString());
    }
    try {
      c.close();
    } catch (SQLException e) {
      // aborted already
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    Connection c = connection;
    connection = null;
    if (c == null) {
      return;
    }
    try {
      c.setAutoCommit(autoCommitBefore);
      c.setNetworkTimeout(Runnable::run, networkTimeoutBefore);
      c.close();
    } catch (SQLException e) {
      log.debug("closing the scheduler's connection failed: {}", e.toString());
      try {
        c.abort(Runnable::run);
        c.close();
      } catch (SQLException ignored) {
        // nothing more to do
      }
    }
  }
}
