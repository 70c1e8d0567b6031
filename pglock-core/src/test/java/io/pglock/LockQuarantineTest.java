package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The quarantine after a failover ({@code V14__failover_quarantine.sql}), on a schema of the test's
 * own, with the time the server "became primary" set by hand (as the first session on a new timeline
 * sets it): a lock session waits until the longest lease has passed since, or fails at once, saying
 * when, if that is longer than its connect timeout allows; the SQL API refuses a session lock with
 * PGL03 until then. {@link FailoverTest} shows it across a real promotion.
 */
class LockQuarantineTest {
  private final String schema = "quarantine_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  private final DataSource ds = TestDatabase.get().dataSource("pglock-quarantine-test");

  @BeforeEach
  void migrate() {
    PgLockSchema.migrate(ds, schema);
  }

  @AfterEach
  void drop() throws SQLException {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }

  @Test
  void aFreshMigration_noWait() throws Exception {
    try (PgLocks locks = PgLocks.builder(ds).schema(schema).namespace("quarantine").lease(Duration.ofSeconds(2)).build()) {
      long start = System.nanoTime();
      Optional<LockHandle> h = locks.lock("a").tryAcquire();
      assertThat(h).isPresent();
      h.get().close();
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
    }
  }

  @Test
  void justPromoted_aSessionWaitsOutTheLongestLease() throws Exception {
    becamePrimaryNow(Duration.ofSeconds(3));
    long start = System.nanoTime();
    try (PgLocks locks = PgLocks.builder(ds).schema(schema).namespace("quarantine").lease(Duration.ofSeconds(2))
        .connectTimeout(Duration.ofSeconds(30)).build()) {
      try (LockHandle h = locks.lock("a").acquire(Duration.ofSeconds(60))) {
        assertThat(h.isHeld()).isTrue();
      }
    }
    // measured from after the row was set, so the whole wait lies inside
    assertThat(Duration.ofNanos(System.nanoTime() - start)).as("the wait: the longest lease (3 s), not the session's (2 s)")
        .isGreaterThanOrEqualTo(Duration.ofMillis(2900));
  }

  @Test
  void justPromoted_aWaitLongerThanTheConnectTimeout_failsAtOnceSayingWhen() throws Exception {
    becamePrimaryNow(Duration.ofMinutes(5));
    long start = System.nanoTime();
    assertThatThrownBy(() -> {
      try (PgLocks locks = PgLocks.builder(ds).schema(schema).namespace("quarantine").lease(Duration.ofSeconds(2))
          .connectTimeout(Duration.ofSeconds(10)).build()) {
        locks.lock("a").tryAcquire();
      }
    }).isInstanceOf(LockSessionException.class).hasMessageContaining("became primary less than a lease ago")
        .hasMessageContaining("granted here again in");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).as("at once, not after the connect timeout")
        .isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void justPromoted_theSqlApiRefusesSessionLocks_notTransactionLocks() throws Exception {
    becamePrimaryNow(Duration.ofMinutes(5));
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      assertThatThrownBy(() -> s.execute("SELECT " + schema + ".try_lock('quarantine', 'a')"))
          .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("PGL03"))
          .hasMessageContaining("granted here again in");
      c.setAutoCommit(false);
      try (Statement t = c.createStatement()) {
        t.execute("SELECT " + schema + ".xact_lock('quarantine', 'a')");
      }
      c.rollback();
    }
  }

  /** What the first session on a new timeline records, with the longest lease seen. */
  private void becamePrimaryNow(Duration longestLease) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".primary_epoch SET since = clock_timestamp(),"
            + " longest_lease = ?::interval")) {
      ps.setString(1, longestLease.toMillis() + " milliseconds");
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }
}
