package io.pglock.queue.internal;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * One short unit of work on a connection borrowed from the data source: bounded by a network
 * timeout, committed if the connection came with autocommit off (rolled back on failure), and given
 * back with its network timeout as it came (a pool lends it again unchanged).
 */
final class ShortCall {
  private ShortCall() {}

  @FunctionalInterface
  interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  static <T> T run(DataSource dataSource, int timeoutMillis, Work<T> work) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      int timeout = c.getNetworkTimeout();
      c.setNetworkTimeout(Runnable::run, timeoutMillis);
      try {
        T result = work.run(c);
        if (!c.getAutoCommit()) {
          c.commit();
        }
        return result;
      } catch (SQLException | RuntimeException e) {
        if (!c.getAutoCommit()) {
          c.rollback();
        }
        throw e;
      } finally {
        c.setNetworkTimeout(Runnable::run, timeout);
      }
    }
  }
}
