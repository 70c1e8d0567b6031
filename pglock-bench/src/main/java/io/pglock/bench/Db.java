package io.pglock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.pglock.PgLocks;
import io.pglock.PgLocksBuilder;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Properties;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.postgresql.Driver;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Connections for the benchmarks. Every connection a benchmark opens carries an
 * {@code application_name} that starts with this run's prefix, so that counts in
 * {@code pg_stat_activity} and {@code pg_locks} see only this run, not other clients of the server.
 */
final class Db {
  private final BenchOptions options;
  /** Unique to this JVM: {@code bench-<pid>}. */
  final String runPrefix;

  Db(BenchOptions options) {
    this.options = options;
    this.runPrefix = "bench-" + ProcessHandle.current().pid();
  }

  BenchOptions options() {
    return options;
  }

  /** A plain connection, not pooled, with the given application_name. */
  Connection connect(String applicationName) throws SQLException {
    Properties p = new Properties();
    if (!options.url().contains("user=")) {
      p.setProperty("user", options.user());
    }
    if (options.password() != null && !options.url().contains("password=")) {
      p.setProperty("password", options.password());
    }
    p.setProperty("ApplicationName", applicationName);
    Connection c = new Driver().connect(options.url(), p);
    if (c == null) {
      throw new SQLException("pgjdbc does not accept the URL " + options.url());
    }
    return c;
  }

  /** An unpooled data source for pglock's own sessions. */
  DataSource simpleDataSource() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(options.url());
    if (!options.url().contains("user=")) {
      ds.setUser(options.user());
    }
    if (options.password() != null && !options.url().contains("password=")) {
      ds.setPassword(options.password());
    }
    return ds;
  }

  /**
   * A PgLocks whose sessions show as {@code pglock:<runPrefix>-<node>:...}.
   *
   * @param node a short suffix naming the benchmark side, e.g. "b2"
   */
  PgLocks pgLocks(String node, UnaryOperator<PgLocksBuilder> settings) {
    return settings.apply(PgLocks.builder(simpleDataSource()).nodeName(nodeName(node))).build();
  }

  String nodeName(String node) {
    return runPrefix + "-" + node;
  }

  /** The application_name pattern of a pglock node's sessions, for LIKE. */
  String pglockPattern(String node) {
    return "pglock:" + nodeName(node) + ":%";
  }

  /** A HikariCP pool of fixed size whose connections show as {@code <runPrefix>-<name>}. */
  HikariDataSource hikari(String name, int size) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(options.url());
    if (!options.url().contains("user=")) {
      c.setUsername(options.user());
    }
    if (options.password() != null && !options.url().contains("password=")) {
      c.setPassword(options.password());
    }
    c.setPoolName(runPrefix + "-" + name);
    c.setMaximumPoolSize(size);
    c.setMinimumIdle(size);
    c.addDataSourceProperty("ApplicationName", runPrefix + "-" + name);
    return new HikariDataSource(c);
  }

  /** Connections in this database whose application_name matches the LIKE pattern. */
  static int countSessions(Connection monitor, String pattern) throws SQLException {
    try (PreparedStatement ps = monitor.prepareStatement("""
        SELECT count(*) FROM pg_stat_activity
         WHERE datname = current_database() AND application_name LIKE ?""")) {
      ps.setString(1, pattern);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** Advisory locks granted to connections whose application_name matches the LIKE pattern. */
  static long countAdvisoryLocks(Connection monitor, String pattern) throws SQLException {
    try (PreparedStatement ps = monitor.prepareStatement("""
        SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND a.application_name LIKE ?""")) {
      ps.setString(1, pattern);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * The pid of the one backend that holds the advisory lock on a bigint key and whose
   * application_name matches the LIKE pattern; throws if there is not exactly one (so that a
   * benchmark never acts on someone else's backend).
   */
  static int holderPid(Connection monitor, String pattern, long key) throws SQLException {
    try (PreparedStatement ps = monitor.prepareStatement("""
        SELECT a.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND l.classid = (?::bigint)::oid AND l.objid = (?::bigint)::oid
           AND a.application_name LIKE ?""")) {
      ps.setLong(1, key >>> 32);
      ps.setLong(2, key & 0xffff_ffffL);
      ps.setString(3, pattern);
      try (ResultSet rs = ps.executeQuery()) {
        java.util.List<Integer> pids = new java.util.ArrayList<>();
        while (rs.next()) {
          pids.add(rs.getInt(1));
        }
        if (pids.size() != 1) {
          throw new IllegalStateException("expected one backend named like " + pattern + " holding advisory key "
              + key + ", found pids " + pids);
        }
        return pids.get(0);
      }
    }
  }

  /** Every lock in the server's shared lock table now (all databases, all clients). */
  static long countAllLocks(Connection monitor) throws SQLException {
    try (PreparedStatement ps = monitor.prepareStatement("SELECT count(*) FROM pg_locks");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
