package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mariadb.jdbc.MariaDbDataSource;
import org.postgresql.ds.PGSimpleDataSource;

/** Bad input and unusable environments get precise exceptions whose messages name the fix. */
class ErrorsTest extends PgLocksTestSupport {

  @Test
  void builder_badValues_areRefusedWithNameValueAndLimit() {
    assertThatThrownBy(() -> builder().lease(Duration.ofMillis(10))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lease must be between PT1S and PT1H: PT0.01S");
    assertThatThrownBy(() -> builder().lockSessions(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lockSessions must be between 1 and 16: 0");
    assertThatThrownBy(() -> builder().maxHeldLocks(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxHeldLocks");
    assertThatThrownBy(() -> builder().namespace("other")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("namespace was already set to test");
    assertThatThrownBy(() -> PgLocks.builder(db().dataSource()).nodeName("tab\there"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nodeName");
  }

  @Test
  void acquire_badDurations_areRefused() {
    PgLocks locks = newLocks();
    SessionLock lock = locks.lock("d");
    assertThatThrownBy(() -> lock.acquire(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must not be negative");
    assertThatThrownBy(() -> lock.tryAcquire(Duration.ofDays(10_000))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("use acquire() to wait without limit");
    assertThatThrownBy(() -> lock.acquire(null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must not be null");
  }

  @Test
  void lock_badNames_areRefused() {
    PgLocks locks = newLocks();
    assertThatThrownBy(() -> locks.lock((String) null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lock name must not be null");
    assertThatThrownBy(() -> locks.lock(" ")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("blank");
    assertThatThrownBy(() -> locks.lock("n".repeat(600))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("longer than 512");
  }

  @Test
  void closedPgLocks_refusesUse_andReleasedEverything() throws Exception {
    PgLocks locks = builder().build();
    LockHandle h = locks.lock("held-at-close").tryAcquire().orElseThrow();
    List<LossCause> causes = new ArrayList<>();
    h.onLoss(causes::add);
    locks.close();
    locks.close();
    assertThat(h.state()).isEqualTo(HandleState.LOST);
    assertThat(h.lost().toCompletableFuture().get()).isEqualTo(LossCause.CLOSED);
    await("callback", Duration.ofSeconds(5), () -> causes.size() == 1);
    assertThatThrownBy(() -> locks.lock("x")).isInstanceOf(PgLocksClosedException.class)
        .hasMessageContaining("closed; build a new one");
    assertThat(locks.openSessions()).isZero();
  }

  @Test
  void build_onMariaDb_isUnsupportedDatabase() throws SQLException {
    MariaDbDataSource maria = new MariaDbDataSource("jdbc:mariadb://127.0.0.1:3306/test?user=root");
    assertThatThrownBy(() -> PgLocks.builder(maria).build()).isInstanceOf(UnsupportedDatabaseException.class)
        .hasMessageContaining("pglock needs PostgreSQL").hasMessageContaining("MariaDB");
  }

  @Test
  void transactionLocksOnly_refusesSessionLocks_namingTheOption_butLocksInTransactions() throws Exception {
    PgLocks locks = track(builder().transactionLocksOnly().build());
    assertThat(locks.openSessions()).isZero();
    assertThat(locks.config().transactionLocksOnly()).isTrue();
    assertThatThrownBy(() -> locks.lock("session-lock")).isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("transactionLocksOnly()").hasMessageContaining("inTransaction");
    assertThatThrownBy(() -> locks.readWriteLock("session-lock")).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> builder().transactionLocksOnly().transactionLocksOnly())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("transactionLocksOnly was already set");
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      assertThat(locks.inTransaction(c).tryLock("in-transaction")).isTrue();
      assertThat(serverHolders(c, locks.key("in-transaction"))).isEqualTo(1);
      c.commit();
      assertThat(serverHolders(c, locks.key("in-transaction"))).isZero();
    }
  }

  @Test
  void transactionLocksOnly_onMariaDb_isStillUnsupportedDatabase() throws SQLException {
    MariaDbDataSource maria = new MariaDbDataSource("jdbc:mariadb://127.0.0.1:3306/test?user=root");
    assertThatThrownBy(() -> PgLocks.builder(maria).transactionLocksOnly().build())
        .isInstanceOf(UnsupportedDatabaseException.class).hasMessageContaining("pglock needs PostgreSQL");
  }

  @Test
  void build_serverUnreachable_isLockSessionException() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL("jdbc:postgresql://127.0.0.1:1/test?connectTimeout=2");
    assertThatThrownBy(() -> PgLocks.builder(ds).build()).isInstanceOf(LockSessionException.class)
        .hasMessageContaining("could not open a lock session").hasMessageContaining("08");
  }

  @Test
  void maxHeldLocks_exceeded_isLockCapacityException_andNothingLeaks() {
    PgLocks locks = track(builder().maxHeldLocks(3).build());
    List<LockHandle> held = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      held.add(locks.lock("cap-" + i).tryAcquire().orElseThrow());
    }
    assertThatThrownBy(() -> locks.lock("cap-3").tryAcquire()).isInstanceOf(LockCapacityException.class)
        .hasMessageContaining("3 locks are held").hasMessageContaining("maxHeldLocks");
    // shared holders of one key count once: joining a held read lock needs no capacity
    held.forEach(LockHandle::close);
    await("capacity back", Duration.ofSeconds(5), () -> locks.heldLocks() == 0);
    LockHandle r1 = locks.readWriteLock("shared").readLock().tryAcquire().orElseThrow();
    LockHandle r2 = locks.readWriteLock("shared").readLock().tryAcquire().orElseThrow();
    assertThat(locks.heldLocks()).isEqualTo(1);
    r1.close();
    r2.close();
  }

  @Test
  void nonSuperuser_canLock_butNotCreateSchema_withNamedFix() throws Exception {
    try (Connection admin = db().connect(); Statement st = admin.createStatement()) {
      st.execute("DROP ROLE IF EXISTS pglock_app");
      st.execute("CREATE ROLE pglock_app LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE");
    }
    try {
      PGSimpleDataSource ds = new PGSimpleDataSource();
      ds.setURL(db().jdbcUrl());
      ds.setUser("pglock_app");
      ds.setApplicationName("pglock-test-app");
      try (PgLocks locks = PgLocks.builder(ds).namespace("test").build()) {
        try (LockHandle h = locks.lock("as-app").acquire(Duration.ofSeconds(5))) {
          assertThat(h.isHeld()).isTrue();
        }
        assertThatThrownBy(() -> PgLockSchema.migrate(ds, "pglock_app_schema"))
            .isInstanceOf(MissingPrivilegeException.class)
            .hasMessageContaining("CREATE SCHEMA pglock_app_schema AUTHORIZATION");
      }
    } finally {
      try (Connection admin = db().connect(); Statement st = admin.createStatement()) {
        st.execute("DROP ROLE IF EXISTS pglock_app");
      }
    }
  }
}
