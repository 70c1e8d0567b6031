package io.pglock.dashboard.internal.data;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * One request's connection. The request has a deadline, the query timeout from its start: each
 * statement may take what is left of it (rounded up to whole seconds, as JDBC counts; the server
 * cancels it then), none starts after it, and a silent network fails a read after the timeout and
 * 5 s more. So a page answers within the query timeout and 1 s once it has its connection. The
 * connection goes back to its pool as it came. {@code {s}} in SQL stands for the checked schema name.
 */
public final class Db implements AutoCloseable {
  private final Connection connection;
  private final String schema;
  private final Duration timeout;
  private final long deadlineNanos;
  private final int networkTimeoutBefore;
  /** Results a request's page reads more than once (one pass that serves every queue), by name. */
  private final java.util.Map<String, Object> memo = new java.util.HashMap<>();
  private final SharedReads shared;

  private Db(Connection connection, String schema, Duration timeout, SharedReads shared) throws SQLException {
    this.connection = connection;
    this.shared = shared;
    this.schema = schema;
    this.timeout = timeout;
    this.deadlineNanos = System.nanoTime() + timeout.toNanos();
    this.networkTimeoutBefore = connection.getNetworkTimeout();
    connection.setNetworkTimeout(Runnable::run, (int) timeout.plusSeconds(5).toMillis());
    if (!connection.getAutoCommit()) {
      connection.setAutoCommit(true);
    }
  }

  /**
   * {@return a connection from the data source for one request}
   *
   * @param shared results the dashboard's requests share, or null for none
   */
  public static Db open(DataSource dataSource, String schema, Duration timeout, SharedReads shared)
      throws SQLException {
    Connection c = dataSource.getConnection();
    try {
      return new Db(c, schema, timeout, shared);
    } catch (SQLException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  /** Binds a statement's parameters. */
  @FunctionalInterface
  public interface Binder {
    /** Binds. */
    void bind(PreparedStatement ps) throws SQLException;
  }

  /** Reads one row. */
  @FunctionalInterface
  public interface Row<T> {
    /** Reads. */
    T read(ResultSet rs) throws SQLException;
  }

  /** {@return the rows of a query} */
  public <T> List<T> list(String sql, Binder binder, Row<T> row) throws SQLException {
    try (PreparedStatement ps = prepare(sql)) {
      binder.bind(ps);
      List<T> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(row.read(rs));
        }
      }
      return rows;
    }
  }

  /** {@return the first row of a query, if any} */
  public <T> Optional<T> one(String sql, Binder binder, Row<T> row) throws SQLException {
    List<T> rows = list(sql, binder, row);
    return rows.isEmpty() ? Optional.empty() : Optional.ofNullable(rows.get(0));
  }

  /** Reads a result once per request. */
  @FunctionalInterface
  interface Read<T> {
    /** Reads. */
    T read() throws SQLException;
  }

  /** {@return a result read at most once per request: the first call reads it, later ones get it again} */
  @SuppressWarnings("unchecked")
  <T> T memo(String name, Read<T> read) throws SQLException {
    Object v = memo.get(name);
    if (v == null) {
      v = read.read();
      memo.put(name, v);
    }
    return (T) v;
  }

  /**
   * {@return a result shared by the dashboard's requests for {@link SharedReads#TTL}, read again
   * when older; within one request, always the same}
   */
  <T> T shared(String name, Read<T> read) throws SQLException {
    return shared(name, SharedReads.TTL, read);
  }

  /** {@return as {@link #shared(String, Read)}, for a time of the caller's choosing} */
  <T> T shared(String name, Duration ttl, Read<T> read) throws SQLException {
    return memo(name, () -> {
      @SuppressWarnings("unchecked")
      T v = shared == null ? null : (T) shared.get(name);
      if (v == null) {
        v = read.read();
        if (shared != null) {
          shared.put(name, v, ttl);
        }
      }
      return v;
    });
  }

  /** {@return true if a result of that name was read in this request, or is shared and fresh} */
  boolean memoized(String name) {
    return memo.containsKey(name) || (shared != null && shared.get(name) != null);
  }

  /** {@return the count of rows an update changed} */
  public int update(String sql, Binder binder) throws SQLException {
    try (PreparedStatement ps = prepare(sql)) {
      binder.bind(ps);
      return ps.executeUpdate();
    }
  }

  private PreparedStatement prepare(String sql) throws SQLException {
    long left = deadlineNanos - System.nanoTime();
    if (left <= 0) {
      throw new SQLTimeoutException("the page's queries took longer than " + timeout.toMillis() + " ms (the"
          + " dashboard's query timeout): the database is slow or busy; try again, or raise"
          + " DashboardBuilder.queryTimeout", "57014");
    }
    PreparedStatement ps = connection.prepareStatement(sql.replace("{s}", schema));
    ps.setQueryTimeout((int) Math.max(1, (left + 999_999_999L) / 1_000_000_000L));
    return ps;
  }

  /** {@return true once the request's deadline has passed} */
  public boolean pastDeadline() {
    return deadlineNanos - System.nanoTime() <= 0;
  }

  /** {@return a timestamp column as an instant, or null} */
  public static Instant instant(ResultSet rs, String column) throws SQLException {
    Timestamp t = rs.getTimestamp(column);
    return t == null ? null : t.toInstant();
  }

  /** {@return an interval in milliseconds read from a column, or null} */
  public static Duration millis(ResultSet rs, String column) throws SQLException {
    double v = rs.getDouble(column);
    return rs.wasNull() ? null : Duration.ofMillis((long) v);
  }

  /** {@return a text column, if not null} */
  public static Optional<String> text(ResultSet rs, String column) throws SQLException {
    return Optional.ofNullable(rs.getString(column));
  }

  @Override
  public void close() throws SQLException {
    try {
      connection.setNetworkTimeout(Runnable::run, networkTimeoutBefore);
    } finally {
      connection.close();
    }
  }
}
