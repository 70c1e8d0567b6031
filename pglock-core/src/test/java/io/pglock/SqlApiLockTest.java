package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The SQL API's locks (schema version 13, docs/sql-api.md) over JDBC: the very lock the Java library
 * takes by the same name, validated by the same rules, named in the locks view, and holds recorded in
 * the history as {@code SessionLock.run} records them.
 */
class SqlApiLockTest extends PgLocksTestSupport {
  private static final String NS = "sql-api-test";

  private final String name = "sql-" + UUID.randomUUID();

  @BeforeAll
  static void installSchema() {
    assertThat(PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA))
        .isEqualTo(PgLockSchema.latestVersion()).isGreaterThanOrEqualTo(13);
  }

  @Test
  void tryLock_sqlHolds_javaOfTheSameNameIsRefused_andTheOtherWayRound() throws Exception {
    PgLocks locks = track(PgLocks.builder(db().dataSource()).namespace(NS).build());
    Connection c = connect();
    assertThat(bool(c, "SELECT pglock.try_lock(?, ?)", NS, name)).isTrue();
    assertThat(holderPids(c, LockKey.named(NS, name))).containsExactly(pid(c));
    assertThat(locks.lock(name).tryAcquire()).isEmpty();

    call(c, "SELECT pglock.unlock(?, ?)", NS, name);
    try (LockHandle h = locks.lock(name).tryAcquire().orElseThrow()) {
      assertThat(bool(c, "SELECT pglock.try_lock(?, ?)", NS, name)).isFalse();
      assertThat(bool(c, "SELECT pglock.try_lock(?, ?, shared => true)", NS, name)).isFalse();
    }
  }

  @Test
  void tryLock_shared_admitsSharedHolders_andExcludesJavasExclusiveLock() throws Exception {
    PgLocks locks = track(PgLocks.builder(db().dataSource()).namespace(NS).build());
    Connection a = connect();
    Connection b = connect();
    assertThat(bool(a, "SELECT pglock.try_lock(?, ?, shared => true)", NS, name)).isTrue();
    assertThat(bool(b, "SELECT pglock.try_lock(?, ?, true)", NS, name)).isTrue();
    assertThat(locks.lock(name).tryAcquire()).isEmpty();
    try (LockHandle shared = locks.readWriteLock(name).readLock().tryAcquire().orElseThrow()) {
      assertThat(bool(a, "SELECT pglock.try_lock(?, ?)", NS, name)).as("exclusive from SQL").isFalse();
    }
    call(a, "SELECT pglock.unlock(?, ?, shared => true)", NS, name);
    call(b, "SELECT pglock.unlock(?, ?, true)", NS, name);
    assertThat(serverHolders(a, LockKey.named(NS, name))).isZero();
  }

  @Test
  void lock_waitsUpToLockTimeout_then55P03_andHoldsNothing() throws Exception {
    Connection holder = connect();
    Connection waiter = connect();
    call(holder, "SELECT pglock.lock(?, ?)", NS, name);
    call(waiter, "SET lock_timeout = '200ms'");
    assertThatThrownBy(() -> call(waiter, "SELECT pglock.lock(?, ?)", NS, name))
        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("55P03"));
    assertThat(holderPids(holder, LockKey.named(NS, name))).containsExactly(pid(holder));
    call(holder, "SELECT pglock.unlock(?, ?)", NS, name);
    call(waiter, "SELECT pglock.lock(?, ?)", NS, name);
    assertThat(holderPids(holder, LockKey.named(NS, name))).containsExactly(pid(waiter));
    call(waiter, "SELECT pglock.unlock(?, ?)", NS, name);
  }

  @Test
  void unlock_notHeld_isPGL01_namingTheLock() throws Exception {
    Connection c = connect();
    assertThatThrownBy(() -> call(c, "SELECT pglock.unlock(?, ?)", NS, name))
        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("PGL01"))
        .hasMessageContaining(NS + ":" + name).hasMessageContaining("not held by this connection");
  }

  @Test
  void sessionLock_survivesRollback_andStacksAsPgAdvisoryLockDoes() throws Exception {
    Connection c = connect();
    c.setAutoCommit(false);
    assertThat(bool(c, "SELECT pglock.try_lock(?, ?)", NS, name)).isTrue();
    assertThat(bool(c, "SELECT pglock.try_lock(?, ?)", NS, name)).isTrue();
    c.rollback();
    c.setAutoCommit(true);
    call(c, "SELECT pglock.unlock(?, ?)", NS, name);
    assertThat(serverHolders(c, LockKey.named(NS, name))).as("taken twice, unlocked once").isEqualTo(1);
    call(c, "SELECT pglock.unlock(?, ?)", NS, name);
    assertThat(serverHolders(c, LockKey.named(NS, name))).isZero();
  }

  @Test
  void xactLocks_excludeJava_andEndWithTheTransaction() throws Exception {
    PgLocks locks = track(PgLocks.builder(db().dataSource()).namespace(NS).build());
    Connection c = connect();
    c.setAutoCommit(false);
    assertThat(bool(c, "SELECT pglock.try_xact_lock(?, ?)", NS, name)).isTrue();
    assertThat(locks.lock(name).tryAcquire()).isEmpty();
    c.commit();
    assertThat(serverHolders(c, LockKey.named(NS, name))).isZero();

    call(c, "SELECT pglock.xact_lock(?, ?, shared => true)", NS, name);
    assertThat(locks.lock(name).tryAcquire()).isEmpty();
    c.rollback();
    try (LockHandle h = locks.lock(name).tryAcquire().orElseThrow()) {
      assertThat(bool(c, "SELECT pglock.try_xact_lock(?, ?)", NS, name)).isFalse();
      c.rollback();
    }
  }

  @Test
  void grantedLock_hasItsNameInTheLocksView() throws Exception {
    Connection c = connect();
    assertThat(bool(c, "SELECT pglock.try_lock(?, ?)", NS, name)).isTrue();
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT namespace, name, mode, pid FROM pglock.locks WHERE key = pglock.key(?, ?)")) {
      ps.setString(1, NS);
      ps.setString(2, name);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        assertThat(List.of(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4)))
            .containsExactly(NS, name, "exclusive", pid(c));
      }
    }
    call(c, "SELECT pglock.unlock(?, ?)", NS, name);
  }

  @Test
  void invalidNamespaceOrName_is22023_whereJavaRefusesItToo() throws Exception {
    Connection c = connect();
    String[][] bad = {{"a:b", "x", "':'"}, {"a b", "x", "whitespace"}, {"a\tb", "x", "control"},
        {"", "x", "empty"}, {"n".repeat(64), "x", "longer than 63"}, {NS, "   ", "blank"},
        {NS, "é".repeat(257), "longer than 512"}};
    for (String[] b : bad) {
      assertThatThrownBy(() -> LockKey.named(b[0], b[1])).as("Java refuses %s", b[2])
          .isInstanceOf(IllegalArgumentException.class);
      for (String fn : List.of("try_lock", "lock", "unlock", "try_xact_lock", "xact_lock", "try_lock_with_history",
          "lock_with_history")) {
        assertThatThrownBy(() -> call(c, "SELECT pglock." + fn + "(?, ?)", b[0], b[1])).as("%s: %s", fn, b[2])
            .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("22023"))
            .hasMessageContaining(b[2]);
      }
    }
    assertThatThrownBy(() -> call(c, "SELECT pglock.try_lock(NULL, 'x')"))
        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("22023"));
    assertThat(LockKey.named(NS, "é".repeat(256)).int64()).as("512 bytes is allowed")
        .isEqualTo(longValue(c, "SELECT pglock.checked_key(?, ?)", NS, "é".repeat(256)));
  }

  @Test
  void holdWithHistory_recordsReleasedAndFailed_asRunDoes() throws Exception {
    Connection c = connect();
    call(c, "SET application_name = 'sql-api-node'");
    long released = longValue(c, "SELECT pglock.lock_with_history(?, ?)", NS, name);
    assertThat(hold(released)).containsExactly(NS, name, "sql-api-node", "open", null, null, null);
    assertThat(pidOfHold(released)).isEqualTo(pid(c));
    assertThat(bool(c, "SELECT pglock.unlock_with_history(?)", released)).isTrue();
    assertThat(hold(released)).containsExactly(NS, name, "sql-api-node", "released", null, null, null);

    long failed = longValue(c, "SELECT pglock.try_lock_with_history(?, ?, node => 'etl-7')", NS, name);
    assertThat(bool(c, "SELECT pglock.unlock_with_history(?, error_message => ?, error_class => ?)", failed,
        "no such invoice", "KeyError")).isTrue();
    assertThat(hold(failed)).containsExactly(NS, name, "etl-7", "failed", null, "KeyError", "no such invoice");
    assertThat(serverHolders(c, LockKey.named(NS, name))).isZero();

    long lost = longValue(c, "SELECT pglock.lock_with_history(?, ?)", NS, name);
    call(c, "SELECT pglock.unlock(?, ?)", NS, name);
    assertThat(bool(c, "SELECT pglock.unlock_with_history(?)", lost)).as("the lock was not held").isFalse();
    assertThat(hold(lost)).containsExactly(NS, name, "sql-api-node", "lost", "NOT_HELD", null, null);
  }

  @Test
  void unlockWithHistory_endedOrSomeoneElsesHold_isPGL02_andLeavesTheLock() throws Exception {
    Connection owner = connect();
    Connection other = connect();
    long id = longValue(owner, "SELECT pglock.lock_with_history(?, ?)", NS, name);
    assertThat(longValue(other, "SELECT coalesce(pglock.try_lock_with_history(?, ?), -1)", NS, name))
        .as("busy: no hold").isEqualTo(-1L);
    assertThatThrownBy(() -> call(other, "SELECT pglock.unlock_with_history(?)", id))
        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("PGL02"))
        .hasMessageContaining("belongs to backend " + pid(owner));
    assertThat(holderPids(owner, LockKey.named(NS, name))).containsExactly(pid(owner));
    call(owner, "SELECT pglock.unlock_with_history(?)", id);
    assertThatThrownBy(() -> call(owner, "SELECT pglock.unlock_with_history(?)", id))
        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("PGL02"))
        .hasMessageContaining("ended already as released");
  }

  @Test
  void holdOfADeadClient_isClosedAsDisconnected_byTheNextHolder() throws Exception {
    Connection dead = connect();
    long id = longValue(dead, "SELECT pglock.lock_with_history(?, ?)", NS, name);
    int deadPid = pid(dead);
    Connection c = connect();
    call(c, "SELECT pg_terminate_backend(?)", deadPid);
    await("the terminated client's backend to be gone", Duration.ofSeconds(30),
        () -> holders(c, LockKey.named(NS, name)) == 0);
    long next = longValue(c, "SELECT pglock.lock_with_history(?, ?)", NS, name);
    assertThat(hold(id).get(3)).isEqualTo("disconnected");
    call(c, "SELECT pglock.unlock_with_history(?)", next);
  }

  // --- helpers: every value a bound parameter

  private static void bind(PreparedStatement ps, Object... args) throws SQLException {
    for (int i = 0; i < args.length; i++) {
      ps.setObject(i + 1, args[i]);
    }
  }

  private static void call(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, args);
      ps.execute();
    }
  }

  private static boolean bool(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, args);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  private static long longValue(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, args);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static int pid(Connection c) throws SQLException {
    return (int) longValue(c, "SELECT pg_backend_pid()");
  }

  private int pidOfHold(long id) throws SQLException {
    return (int) longValue(connect(), "SELECT pid FROM pglock.lock_history WHERE id = ?", id);
  }

  /** namespace, name, node, outcome, loss cause, error class, error message of a hold. */
  private List<String> hold(long id) throws SQLException {
    try (PreparedStatement ps = connect().prepareStatement("SELECT namespace, name, node, outcome, loss_cause,"
        + " error_class, error_message FROM pglock.history WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("hold %d recorded", id).isTrue();
        List<String> row = new ArrayList<>();
        for (int i = 1; i <= 7; i++) {
          row.add(rs.getString(i));
        }
        return row;
      }
    }
  }
}
