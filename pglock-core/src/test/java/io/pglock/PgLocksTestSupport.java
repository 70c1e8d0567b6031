package io.pglock;

import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;

/** Base of tests on a real PostgreSQL: builds PgLocks that are closed after each test, checks for leaks. */
@ExtendWith({NoLeakedLocks.class, LogCapture.class})
abstract class PgLocksTestSupport {
  private final List<AutoCloseable> toClose = new ArrayList<>();

  static TestDatabase db() {
    return TestDatabase.get();
  }

  PgLocksBuilder builder() {
    return PgLocks.builder(db().dataSource()).namespace("test");
  }

  PgLocks newLocks() {
    return track(builder().build());
  }

  <T extends AutoCloseable> T track(T closeable) {
    toClose.add(closeable);
    return closeable;
  }

  /** Runs the task on a thread of its own; the thread is interrupted and stopped after the test. */
  <T> java.util.concurrent.Future<T> inBackground(java.util.concurrent.Callable<T> task) {
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
    toClose.add(pool::shutdownNow);
    return pool.submit(task);
  }

  /** A {@link io.pglock.fault.TcpProxy} to the test database, closed after the test. */
  io.pglock.fault.TcpProxy proxyToDb() throws java.io.IOException {
    java.net.URI uri = java.net.URI.create(db().jdbcUrl().substring("jdbc:".length()));
    return track(new io.pglock.fault.TcpProxy(uri.getHost(), uri.getPort() == -1 ? 5432 : uri.getPort()));
  }

  /** A plain DataSource to the test database through the proxy, its backends named {@code applicationName}. */
  static org.postgresql.ds.PGSimpleDataSource through(io.pglock.fault.TcpProxy proxy, String applicationName) {
    java.net.URI uri = java.net.URI.create(db().jdbcUrl().substring("jdbc:".length()));
    org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
    ds.setURL(proxy.jdbcUrl(uri.getPath().substring(1)) + (uri.getQuery() != null ? "?" + uri.getQuery() : ""));
    if (db().user() != null) {
      ds.setUser(db().user());
    }
    if (db().password() != null) {
      ds.setPassword(db().password());
    }
    ds.setApplicationName(applicationName);
    return ds;
  }

  Connection connect() throws SQLException {
    return track(db().connect());
  }

  @AfterEach
  void closeTracked() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
    toClose.clear();
  }

  /** Waits for a condition with a deadline (never a bare sleep): {@link io.pglock.testing.Await}. */
  static void await(String what, Duration timeout, BooleanSupplier condition) {
    io.pglock.testing.Await.until(what, timeout, condition);
  }

  /** Whether any backend holds the key's server lock, as seen by pg_locks. */
  static int serverHolders(Connection c, LockKey key) throws SQLException {
    return holderPids(c, key).size();
  }

  /** The backends that hold the key's server lock, as seen by pg_locks. */
  static List<Integer> holderPids(Connection c, LockKey key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("""
        SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND classid::bigint = ? AND objid::bigint = ? AND objsubid = ?""")) {
      ps.setLong(1, key.first() & 0xFFFF_FFFFL);
      ps.setLong(2, key.second() & 0xFFFF_FFFFL);
      ps.setInt(3, key.objsubid());
      List<Integer> pids = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          pids.add(rs.getInt(1));
        }
      }
      return pids;
    }
  }

  /** {@link #serverHolders} for use in conditions: unchecked. */
  static int holders(Connection c, LockKey key) {
    try {
      return serverHolders(c, key);
    } catch (SQLException e) {
      throw new RuntimeException(e);
    }
  }

  /** How many advisory lock requests wait on the server in the test database right now. */
  static int serverWaiters() {
    try (Connection c = db().connect(); PreparedStatement ps = c.prepareStatement("""
            SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())""");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    } catch (SQLException e) {
      throw new RuntimeException(e);
    }
  }

  /** How many requests for the key's advisory lock wait on the server right now. */
  static int serverWaiters(LockKey key) {
    try (Connection c = db().connect(); PreparedStatement ps = c.prepareStatement("""
            SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND classid::bigint = ? AND objid::bigint = ? AND objsubid = ?""")) {
      ps.setLong(1, key.first() & 0xFFFF_FFFFL);
      ps.setLong(2, key.second() & 0xFFFF_FFFFL);
      ps.setInt(3, key.objsubid());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    } catch (SQLException e) {
      throw new RuntimeException(e);
    }
  }

  /** Runs a one-row, one-column boolean query with one bigint parameter. */
  static boolean queryBoolean(Connection c, String sql, long param) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, param);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }
}
