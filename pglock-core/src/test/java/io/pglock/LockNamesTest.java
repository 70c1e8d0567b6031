package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Which lock names reach {@code pglock.lock_name}: those of locks held or awaited for a while, not
 * those of every grant; and a name PostgreSQL cannot store is refused at the API.
 */
class LockNamesTest extends PgLocksTestSupport {
  /** Generous: a name is due within two sweeps of a second and one statement, on a loaded machine. */
  private static final Duration NAMED_WITHIN = Duration.ofSeconds(30);

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @Test
  void nameWithNul_isRefusedAtTheApi_namingTheFix() {
    PgLocks locks = newLocks();
    assertThatThrownBy(() -> locks.lock("inv\0oice"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("NUL character (U+0000) at index 3")
        .hasMessageContaining("\"inv\\0oice\"")
        .hasMessageContaining("remove it, or lock on an encoding of the name without it");
    assertThatThrownBy(() -> LockKey.named("billing", "\0"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NUL");
    assertThatThrownBy(() -> locks.readWriteLock("a\0").readLock())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NUL");
  }

  @Test
  void sessionLockHeldAWhile_isNamed_locksHeldBriefly_areNot() throws Exception {
    PgLocks locks = newLocks();
    String run = UUID.randomUUID().toString().substring(0, 8);
    for (int i = 0; i < 200; i++) {
      locks.lock("brief-" + run + "-" + i).tryAcquire().orElseThrow().close();
    }
    long start = System.nanoTime();
    LockHandle held = locks.lock("held-" + run).tryAcquire().orElseThrow();
    await("the held lock's name is recorded", NAMED_WITHIN, () -> recorded("test", "held-" + run) == 1);
    System.out.printf("name recorded %d ms after the grant%n", (System.nanoTime() - start) / 1_000_000);
    // Recorded by the sweep that found the held lock: the brief ones were gone before it looked.
    assertThat(recorded("test", "brief-" + run + "-%")).isZero();
    held.close();
  }

  @Test
  void transactionLockHeldAWhile_isNamed_briefOnesAreNot() throws Exception {
    PgLocks locks = newLocks();
    String run = UUID.randomUUID().toString().substring(0, 8);
    Connection brief = connect();
    brief.setAutoCommit(false);
    for (int i = 0; i < 50; i++) {
      assertThat(locks.inTransaction(brief).tryLock("xact-brief-" + run + "-" + i)).isTrue();
      brief.commit();
    }
    Connection tx = connect();
    tx.setAutoCommit(false);
    locks.inTransaction(tx).lock("xact-held-" + run, Duration.ofSeconds(10));
    await("the transaction lock's name is recorded", NAMED_WITHIN, () -> recorded("test", "xact-held-" + run) == 1);
    tx.rollback();
    // The brief ones were checked by the same or an earlier sweep, against pg_locks, and were not locked.
    assertThat(recorded("test", "xact-brief-" + run + "-%")).isZero();
  }

  @Test
  void lockAwaitedAWhile_showsByNameWhileOnlyPlainSqlHoldsIt() throws Exception {
    PgLocks locks = newLocks();
    String name = "awaited-" + UUID.randomUUID().toString().substring(0, 8);
    LockKey key = locks.key(name);
    Connection sql = connect();
    try (PreparedStatement ps = sql.prepareStatement("SELECT pg_advisory_lock(?)")) {
      ps.setLong(1, key.int64());
      ps.execute();
    }
    Future<LockHandle> waiting = inBackground(() -> locks.lock(name).acquire(Duration.ofSeconds(60)));
    await("the waiter shows by name", NAMED_WITHIN, () -> LockListing.of(db().dataSource()).list().stream()
        .anyMatch(e -> !e.granted() && e.named() && e.key().equals(key)));
    try (PreparedStatement ps = sql.prepareStatement("SELECT pg_advisory_unlock(?)")) {
      ps.setLong(1, key.int64());
      ps.execute();
    }
    waiting.get(60, TimeUnit.SECONDS).close();
  }

  /** Rows of the default schema's name table for the namespace and name (a LIKE pattern). */
  static int recorded(String namespace, String name) {
    try (Connection c = db().connect();
        PreparedStatement ps = c.prepareStatement(
            "SELECT count(*) FROM pglock.lock_name WHERE namespace = ? AND name LIKE ?")) {
      ps.setString(1, namespace);
      ps.setString(2, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }
}
