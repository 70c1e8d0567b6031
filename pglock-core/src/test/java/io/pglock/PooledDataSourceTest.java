package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * pglock on a HikariCP pool, as Spring Boot hands it out: a lock session borrows a pooled
 * connection for its whole life and gives it back with no advisory lock and every setting as it
 * found it; a session that dies is discarded by the pool, never lent again nor kept borrowed.
 */
class PooledDataSourceTest extends PgLocksTestSupport {
  private static final int POOL_SIZE = 4;
  /** What the pool's own setup sets: pglock must leave each of these as it found it. */
  private static final String POOL_INIT_SQL = "SELECT set_config('statement_timeout', '7s', false), "
      + "set_config('lock_timeout', '3s', false), set_config('idle_session_timeout', '0', false)";
  private static final List<String> SETTINGS = List.of("application_name", "idle_session_timeout",
      "tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count", "tcp_user_timeout",
      "client_connection_check_interval", "statement_timeout", "lock_timeout", "synchronous_commit",
      "default_transaction_isolation", "default_transaction_read_only");

  private HikariDataSource pool(boolean autoCommit) {
    HikariConfig config = new HikariConfig();
    config.setDataSource(db().dataSource("pooled-app"));
    config.setMinimumIdle(POOL_SIZE);
    config.setMaximumPoolSize(POOL_SIZE);
    config.setAutoCommit(autoCommit);
    config.setConnectionInitSql(POOL_INIT_SQL);
    config.setConnectionTimeout(5_000);
    config.setPoolName("pglock-test-pool");
    return track(new HikariDataSource(config));
  }

  private PgLocks locksOn(HikariDataSource pool, String node) {
    return PgLocks.builder(pool).namespace("test").nodeName(node).waitSessions(1).build();
  }

  @Test
  void close_givesEveryPooledConnectionBackAsItWas() throws Exception {
    HikariDataSource pool = pool(true);
    Map<Integer, Map<String, String>> before = settingsOfEveryPooledConnection(pool);
    assertThat(before).hasSize(POOL_SIZE);

    PgLocks locks = locksOn(pool, "pooled-close");
    PgLocks other = newLocks();
    Connection admin = connect();
    // a lock on the lock session, and one granted on a wait session (which sets its lock_timeout)
    LockHandle held = locks.lock("pooled-a").tryAcquire().orElseThrow();
    LockHandle blocker = other.lock("pooled-b").tryAcquire().orElseThrow();
    Future<LockHandle> waiting = inBackground(() -> locks.lock("pooled-b").acquire(Duration.ofSeconds(20)));
    await("the pooled instance waits on the server", Duration.ofSeconds(10),
        () -> serverWaiters(locks.key("pooled-b")) == 1);
    blocker.close();
    LockHandle granted = waiting.get(10, TimeUnit.SECONDS);
    assertThat(granted.isHeld()).isTrue();
    assertThat(serverHolders(admin, locks.key("pooled-a"))).isEqualTo(1);
    assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isEqualTo(2); // lock + wait session

    locks.close();

    assertThat(held.state()).isIn(HandleState.LOST, HandleState.RELEASED);
    assertThat(granted.isHeld()).isFalse();
    assertThat(pool.getHikariPoolMXBean().getActiveConnections()).as("borrowed connections after close").isZero();
    assertThat(pool.getHikariPoolMXBean().getTotalConnections()).as("none was discarded").isEqualTo(POOL_SIZE);
    Map<Integer, Map<String, String>> after = settingsOfEveryPooledConnection(pool);
    assertThat(after).as("the same backends, settings as before, no advisory lock").isEqualTo(before);
  }

  @Test
  void autoCommitOffPool_sessionLocksHoldAcrossTime_andConnectionsGoBackWithAutoCommitOff() throws Exception {
    HikariDataSource pool = pool(false);
    Map<Integer, Map<String, String>> before = settingsOfEveryPooledConnection(pool);
    PgLocks locks = locksOn(pool, "pooled-nocommit");
    PgLocks other = newLocks();
    try (LockHandle h = locks.lock("pooled-c").tryAcquire().orElseThrow()) {
      // a session lock taken inside a transaction that never commits would still be held; taken in
      // autocommit it is held, and another process is refused
      assertThat(other.lock("pooled-c").tryAcquire()).isEmpty();
      assertThat(h.isHeld()).isTrue();
    }
    Connection admin = connect();
    await("the release reaches the server", Duration.ofSeconds(10),
        () -> holders(admin, locks.key("pooled-c")) == 0);
    locks.close();
    assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
    List<Connection> borrowed = borrowAll(pool);
    for (Connection c : borrowed) {
      assertThat(c.getAutoCommit()).isFalse();
    }
    closeAll(borrowed);
    assertThat(settingsOfEveryPooledConnection(pool)).isEqualTo(before);
  }

  @Test
  void deadLockSession_isDiscardedByThePool_notKeptBorrowed_andLocksComeBack() throws Exception {
    HikariDataSource pool = pool(true);
    PgLocks locks = locksOn(pool, "pooled-dead");
    Connection admin = connect();
    LockHandle held = locks.lock("pooled-d").tryAcquire().orElseThrow();
    int pid = holderPid(admin, locks.key("pooled-d"));
    assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isEqualTo(1);

    try (PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(?, 10000)")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getBoolean(1)).isTrue();
      }
    }
    await("the handle reports the loss", Duration.ofSeconds(10), () -> held.state() == HandleState.LOST);
    await("the dead session's connection goes back to the pool, which discards it", Duration.ofSeconds(10),
        () -> pool.getHikariPoolMXBean().getActiveConnections() == 0);
    // every connection the pool lends now is alive and is not the dead backend
    List<Connection> borrowed = borrowAll(pool);
    for (Connection c : borrowed) {
      assertThat(c.isValid(2)).isTrue();
      assertThat(backendPid(c)).isNotEqualTo(pid);
    }
    closeAll(borrowed);
    // and the instance carries on through the pool
    Optional<LockHandle> again = locks.lock("pooled-d").tryAcquire();
    assertThat(again).isPresent();
    again.get().close();
  }

  @Test
  void build_poolWithNoConnectionToSpare_failsWithinConnectTimeout_namingThePool() throws Exception {
    HikariDataSource pool = pool(true);
    List<Connection> taken = borrowAll(pool);
    try {
      taken.remove(0).close(); // one left: enough for the lock session, none for the probe
      long start = System.nanoTime();
      assertThatThrownBy(() -> PgLocks.builder(pool).namespace("test").connectTimeout(Duration.ofMillis(500)).build())
          .isInstanceOf(LockSessionException.class)
          .hasMessageContaining("within the connect timeout (500 ms)")
          .hasMessageContaining("a connection for each lock and wait session");
      // the bound of every call: its timeout plus connectTimeout; here generous for a loaded machine
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(500 + 3_000));
    } finally {
      closeAll(taken);
    }
    await("the lock session of the failed build goes back to the pool", Duration.ofSeconds(10),
        () -> pool.getHikariPoolMXBean().getActiveConnections() == 0);
  }

  @Test
  void close_sendsNoCancelThatCouldReachThePoolsNextBorrower() throws Exception {
    HikariDataSource pool = pool(true);
    List<Connection> spare = borrowAll(pool);
    closeAll(spare.subList(0, 2));
    PgLocks other = newLocks();
    for (int round = 0; round < 10; round++) {
      PgLocks locks = locksOn(pool, "pooled-cancel");
      LockHandle blocker = other.lock("pooled-e").tryAcquire().orElseThrow();
      // a wait that times out leaves its wait session idle, still on loan: close() must not cancel it
      assertThat(locks.lock("pooled-e").tryAcquire(Duration.ofMillis(100))).isEmpty();
      blocker.close();
      assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isEqualTo(POOL_SIZE);
      List<Future<String>> borrowers = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        borrowers.add(inBackground(() -> {
          try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT pg_sleep(0.3)")) {
            ps.execute();
            return "ok";
          } catch (SQLException e) {
            return e.getSQLState() + " " + e.getMessage();
          }
        }));
      }
      await("both borrowers wait for a connection", Duration.ofSeconds(10),
          () -> pool.getHikariPoolMXBean().getThreadsAwaitingConnection() == 2);
      locks.close(); // gives the lock and wait sessions' connections to the waiting borrowers
      for (Future<String> b : borrowers) {
        assertThat(b.get(10, TimeUnit.SECONDS)).as("round %d", round).isEqualTo("ok");
      }
    }
    closeAll(spare.subList(2, POOL_SIZE));
  }

  /** Borrows every connection of the pool at once and reads its settings and advisory locks. */
  private Map<Integer, Map<String, String>> settingsOfEveryPooledConnection(HikariDataSource pool) throws SQLException {
    List<Connection> borrowed = borrowAll(pool);
    Map<Integer, Map<String, String>> byPid = new HashMap<>();
    try {
      for (Connection c : borrowed) {
        assertThat(c.isValid(2)).isTrue();
        byPid.put(backendPid(c), settingsOf(c));
      }
    } finally {
      closeAll(borrowed);
    }
    return byPid;
  }

  private static List<Connection> borrowAll(HikariDataSource pool) throws SQLException {
    List<Connection> borrowed = new ArrayList<>();
    for (int i = 0; i < POOL_SIZE; i++) {
      borrowed.add(pool.getConnection());
    }
    return borrowed;
  }

  private static void closeAll(List<Connection> connections) throws SQLException {
    for (Connection c : connections) {
      if (!c.getAutoCommit()) {
        c.rollback();
      }
      c.close();
    }
  }

  private static Map<String, String> settingsOf(Connection c) throws SQLException {
    if (!c.getAutoCommit()) {
      c.rollback(); // read what the session keeps, not what an open transaction would undo
    }
    Map<String, String> values = new HashMap<>();
    for (String name : SETTINGS) {
      try (PreparedStatement ps = c.prepareStatement("SELECT current_setting(?)")) {
        ps.setString(1, name);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          values.put(name, rs.getString(1));
        }
      }
    }
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      values.put("advisory locks", rs.getString(1));
    }
    values.put("network timeout", String.valueOf(c.getNetworkTimeout()));
    return values;
  }

  private static int backendPid(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()"); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static int holderPid(Connection admin, LockKey key) throws SQLException {
    List<Integer> pids = holderPids(admin, key);
    assertThat(pids).hasSize(1);
    return pids.get(0);
  }
}
