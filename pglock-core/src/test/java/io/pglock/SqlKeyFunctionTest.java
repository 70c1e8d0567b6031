package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The SQL twin of the key derivation, and interop between plain SQL locks and pglock locks. */
class SqlKeyFunctionTest extends PgLocksTestSupport {

  @BeforeAll
  static void installSchema() {
    assertThat(PgLockSchema.migrate(db().dataSource(), "pglock")).isEqualTo(PgLockSchema.latestVersion());
  }

  @Test
  void migrate_twice_isANoOp() {
    assertThat(PgLockSchema.migrate(db().dataSource(), "pglock")).isEqualTo(PgLockSchema.latestVersion());
  }

  @Test
  void migrate_badSchemaName_isRefused() {
    assertThatThrownBy(() -> PgLockSchema.migrate(db().dataSource(), "pglock; DROP TABLE x"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lower-case SQL identifier");
  }

  @Test
  void sqlFunction_equalsJavaDerivation() throws SQLException {
    Connection c = connect();
    String[][] cases = {{"billing", "invoice-42"}, {"test", "ключ-🔒"}, {"a", "with:colons and spaces"},
        {"x", "é".repeat(200)}};
    for (String[] kase : cases) {
      try (PreparedStatement ps = c.prepareStatement("SELECT pglock.key(?, ?)")) {
        ps.setString(1, kase[0]);
        ps.setString(2, kase[1]);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertThat(rs.getLong(1)).as("%s:%s", kase[0], kase[1])
              .isEqualTo(LockKey.named(kase[0], kase[1]).int64());
        }
      }
    }
  }

  @Test
  void sqlFunction_namespaceWithColon_isAnError() throws SQLException {
    Connection c = connect();
    assertThatThrownBy(() -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT pglock.key('a:b', 'x')")) {
        ps.executeQuery().close();
      }
    }).isInstanceOf(SQLException.class).hasMessageContaining("namespace");
  }

  @Test
  void plainSqlLock_excludesJavaLock_andBack() throws Exception {
    PgLocks locks = newLocks();
    Connection raw = connect();
    // psql-style lock on the SQL-derived key
    assertThat(queryText(raw, "SELECT pg_try_advisory_lock(pglock.key('test', 'shared-resource'))")).isTrue();
    assertThat(locks.lock("shared-resource").tryAcquire()).isEmpty();
    assertThat(queryText(raw, "SELECT pg_advisory_unlock(pglock.key('test', 'shared-resource'))")).isTrue();
    // and the other way round
    try (LockHandle h = locks.lock("shared-resource").acquire(Duration.ofSeconds(5))) {
      assertThat(queryText(raw, "SELECT pg_try_advisory_lock(pglock.key('test', 'shared-resource'))")).isFalse();
      assertThat(h.isHeld()).isTrue();
    }
  }

  @Test
  void rawPairAndInt64Locks_excludeJavaLocksOfTheSameSpaceOnly() throws Exception {
    PgLocks locks = newLocks();
    Connection raw = connect();
    assertThat(queryText(raw, "SELECT pg_try_advisory_lock(7, 9)")).isTrue();
    assertThat(locks.lock(LockKey.of(7, 9)).tryAcquire()).isEmpty();
    // (7 << 32 | 9) in the 64-bit space is another lock: objsubid keeps them apart
    try (LockHandle h = locks.lock(LockKey.of((7L << 32) | 9)).tryAcquire().orElseThrow()) {
      assertThat(h.isHeld()).isTrue();
    }
    assertThat(queryText(raw, "SELECT pg_advisory_unlock(7, 9)")).isTrue();
    try (LockHandle h = locks.lock(LockKey.of(7, 9)).acquire(Duration.ofSeconds(5))) {
      assertThat(queryText(raw, "SELECT pg_try_advisory_lock_shared(7, 9)")).isFalse();
    }
  }

  private static boolean queryText(Connection c, String sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getBoolean(1);
    }
  }
}
