package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Who holds what, through {@link LockListing} and the view {@code pglock.locks}: names recorded in
 * the background, holders and waiters with their node and pid, and locks of plain SQL with their keys.
 */
class WhoHoldsWhatTest extends PgLocksTestSupport {

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  private static List<LockEntry> entriesOf(LockKey key) {
    return LockListing.of(db().dataSource()).list().stream()
        .filter(e -> sameServerLock(e.key(), key)).toList();
  }

  private static boolean sameServerLock(LockKey a, LockKey b) {
    return a.objsubid() == b.objsubid() && a.first() == b.first() && a.second() == b.second();
  }

  @Test
  void heldAndAwaitedSessionLock_showsNameNodePidAndWaiter() throws Exception {
    PgLocks holder = track(builder().nodeName("who-holder").build());
    PgLocks waiter = track(builder().nodeName("who-waiter").build());
    LockHandle h = holder.lock("who-holds-invoice-7").tryAcquire().orElseThrow();
    LockKey key = holder.key("who-holds-invoice-7");
    await("the name is recorded", Duration.ofSeconds(10),
        () -> entriesOf(key).stream().anyMatch(LockEntry::named));
    Future<LockHandle> waiting = inBackground(() -> waiter.lock("who-holds-invoice-7").acquire(Duration.ofSeconds(30)));
    await("the waiter shows", Duration.ofSeconds(10), () -> entriesOf(key).stream().anyMatch(e -> !e.granted()));

    List<LockEntry> entries = entriesOf(key);
    LockEntry held = entries.stream().filter(LockEntry::granted).findFirst().orElseThrow();
    assertThat(held.key()).isEqualTo(key);
    assertThat(held.key().name()).isEqualTo("who-holds-invoice-7");
    assertThat(held.mode()).isEqualTo(LockMode.EXCLUSIVE);
    assertThat(held.scope()).isEqualTo("session");
    assertThat(held.node()).hasValue("who-holder");
    assertThat(held.role()).hasValue("lock-0");
    assertThat(held.applicationName()).startsWith("pglock:who-holder:lock-0:test");
    assertThat(held.holderNamespace()).hasValue("test");
    assertThat(held.since()).isPresent();
    assertThat(held.blockedBy()).isEmpty();
    LockEntry wait = entries.stream().filter(e -> !e.granted()).findFirst().orElseThrow();
    assertThat(wait.node()).hasValue("who-waiter");
    assertThat(wait.role()).get().asString().startsWith("wait-");
    assertThat(wait.since()).isPresent();
    assertThat(wait.blockedBy()).containsExactly(held.pid());

    h.close();
    waiting.get(30, TimeUnit.SECONDS).close();
  }

  @Test
  void locksOfPlainSql_showWithTheirKeys_andScope() throws Exception {
    Connection sql = connect();
    try (PreparedStatement ps = sql.prepareStatement("SELECT pg_advisory_lock(?), pg_advisory_lock_shared(?, ?)")) {
      ps.setLong(1, 7_700_123_456L);
      ps.setInt(2, -5);
      ps.setInt(3, 77);
      ps.execute();
    }
    LockEntry int64 = entriesOf(LockKey.of(7_700_123_456L)).get(0);
    assertThat(int64.named()).isFalse();
    assertThat(int64.scope()).isEqualTo("session"); // the connection is idle, outside a transaction
    assertThat(int64.node()).isEmpty();
    assertThat(int64.holderNamespace()).isEmpty();
    assertThat(int64.applicationName()).isEqualTo(io.pglock.testing.TestDatabase.TEST_APPLICATION_NAME);
    LockEntry pair = entriesOf(LockKey.of(-5, 77)).get(0);
    assertThat(pair.key()).isEqualTo(LockKey.of(-5, 77));
    assertThat(pair.mode()).isEqualTo(LockMode.SHARED);
    try (PreparedStatement ps = sql.prepareStatement("SELECT pg_advisory_unlock_all()")) {
      ps.execute();
    }

    PgLocks locks = newLocks();
    Connection tx = connect();
    tx.setAutoCommit(false);
    locks.inTransaction(tx).lock("who-in-tx", Duration.ofSeconds(2));
    LockEntry inTx = entriesOf(locks.key("who-in-tx")).get(0);
    assertThat(inTx.scope()).isEqualTo("session or transaction");
    tx.rollback();
    assertThat(entriesOf(locks.key("who-in-tx"))).isEmpty();
  }

  @Test
  void sqlView_namesWhatJavaLocked() throws Exception {
    PgLocks locks = track(builder().nodeName("who-sql").build());
    LockHandle h = locks.readWriteLock("who-sql-catalog").readLock().tryAcquire().orElseThrow();
    Connection c = connect();
    await("the view names the lock", Duration.ofSeconds(10), () -> viewRow(c).equals("test who-sql-catalog shared who-sql"));
    h.close();
  }

  @Test
  void withoutTheSchema_isSchemaMissingException() {
    assertThatThrownBy(() -> LockListing.of(db().dataSource(), "pglock_not_installed").list())
        .isInstanceOf(SchemaMissingException.class).hasMessageContaining("PgLockSchema.migrate");
  }

  private static String viewRow(Connection c) {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT namespace || ' ' || name || ' ' || mode || ' ' || node FROM pglock.locks WHERE name = ?")) {
      ps.setString(1, "who-sql-catalog");
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? String.valueOf(rs.getString(1)) : "";
      }
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }
}
