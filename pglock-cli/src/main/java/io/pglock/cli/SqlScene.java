package io.pglock.cli;

import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.SessionLock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The demo's SQL scene: a plain JDBC connection, with no pglock in it, takes the lock of a
 * resource with {@code pg_advisory_lock}, and a worker's {@code tryAcquire()} returns empty until
 * SQL unlocks it. This is what lets psql, a migration script or a service in another language
 * take part in the same locks.
 *
 * <p>The key comes from the SQL function {@code <schema>.key(namespace, name)} if it is installed
 * ({@link io.pglock.PgLockSchema#migrate} installs it), else from {@link LockKey}'s numbers, locked
 * in the key space they belong to. The connection has a statement timeout, so that the scene can
 * never hang on a lock someone else holds. Not thread-safe.
 */
final class SqlScene {
  private static final String STATEMENT_TIMEOUT = "10s";

  private final DataSource dataSource;
  private final String schema;
  private final Console console;

  /**
   * A scene that looks for the key function in {@code schema}, a trusted SQL identifier (pglock's
   * own schema name, or a test's).
   */
  SqlScene(DataSource dataSource, String schema, Console console) {
    this.dataSource = dataSource;
    this.schema = schema;
    this.console = console;
  }

  /**
   * Plays the scene on the worker's lock of {@code resource}.
   *
   * @return true if the worker was kept out while SQL held the lock and got it after SQL unlocked
   * @throws SQLException if the demo's own connection fails
   */
  boolean run(DemoWorker worker, String resource) throws SQLException {
    console.plain("");
    SessionLock lock = worker.locks().lock(resource);
    try (Connection c = dataSource.getConnection()) {
      try (Statement st = c.createStatement()) {
        st.execute("SET statement_timeout = '" + STATEMENT_TIMEOUT + "'");
      }
      ServerLock sql = hasKeyFunction(c) ? ServerLock.byFunction(schema, lock.key()) : ServerLock.byNumbers(schema, lock.key());
      console.event("SQL and Java share locks: a plain JDBC connection (no pglock) runs SELECT "
          + sql.shown("pg_advisory_lock") + sql.origin());
      sql.call(c, "pg_advisory_lock");
      Optional<LockHandle> whileSqlHolds = lock.tryAcquire();
      whileSqlHolds.ifPresent(LockHandle::close);
      console.event("  " + worker.name() + ": lock(\"" + resource + "\").tryAcquire() "
          + (whileSqlHolds.isEmpty() ? "returned empty while SQL held the lock" : "FAILED: got the lock while SQL held it"));
      sql.call(c, "pg_advisory_unlock");
      Optional<LockHandle> afterUnlock = lock.tryAcquire();
      afterUnlock.ifPresent(LockHandle::close);
      console.event("  after SQL ran pg_advisory_unlock, the same tryAcquire() "
          + (afterUnlock.isPresent() ? "returned a handle: the lock was free again" : "FAILED: still returned empty"));
      return whileSqlHolds.isEmpty() && afterUnlock.isPresent();
    }
  }

  private boolean hasKeyFunction(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT to_regprocedure(? || '.key(text,text)') IS NOT NULL")) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  /**
   * How SQL names one key: the arguments of {@code pg_advisory_lock} and {@code pg_advisory_unlock},
   * as SQL with bind parameters and as shown to the user.
   */
  private record ServerLock(String arguments, List<Object> values, String shownArguments, String origin) {

    static ServerLock byFunction(String schema, LockKey key) {
      return new ServerLock(schema + ".key(?, ?)", List.of(key.namespace(), key.name()),
          schema + ".key('" + key.namespace() + "', '" + key.name() + "')", "");
    }

    static ServerLock byNumbers(String schema, LockKey key) {
      String origin = " (the key of " + key + " as LockKey computes it; the SQL function " + schema
          + ".key is not installed here)";
      if (key.space() == LockKey.KeySpace.INT32_PAIR) {
        return new ServerLock("?, ?", List.of(key.first(), key.second()), key.first() + ", " + key.second(), origin);
      }
      return new ServerLock("?::bigint", List.of(key.int64()), Long.toString(key.int64()), origin);
    }

    String shown(String function) {
      return function + "(" + shownArguments + ")";
    }

    void call(Connection c, String function) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement("SELECT " + function + "(" + arguments + ")")) {
        for (int i = 0; i < values.size(); i++) {
          ps.setObject(i + 1, values.get(i));
        }
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
        }
      }
    }
  }
}
