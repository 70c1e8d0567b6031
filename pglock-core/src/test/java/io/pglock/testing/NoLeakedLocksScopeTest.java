package io.pglock.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The leak check looks only at backends this JVM opened through {@link TestDatabase}: the server is
 * shared, and another client's lock (even one named like pglock's) is not this test run's leak.
 */
class NoLeakedLocksScopeTest {
  private static final long KEY = 0x5C0_7E57L;

  @Test
  void heldLocks_ignoresOtherClients_evenWithPglockApplicationName() throws SQLException {
    TestDatabase db = TestDatabase.get();
    Properties props = new Properties();
    if (db.user() != null) {
      props.setProperty("user", db.user());
    }
    if (db.password() != null) {
      props.setProperty("password", db.password());
    }
    props.setProperty("ApplicationName", "pglock:someone-else:lock-0");
    // Opened behind TestDatabase's back: stands for another process on the shared server.
    try (Connection other = DriverManager.getConnection(db.jdbcUrl(), props);
        Connection checker = db.connect()) {
      lock(other);
      assertThat(NoLeakedLocks.heldLocks(checker)).isEmpty();
      unlock(other);
    }
  }

  @Test
  void heldLocks_reportsALockOfAConnectionFromTestDatabase() throws SQLException {
    TestDatabase db = TestDatabase.get();
    try (Connection mine = db.dataSource().getConnection(); Connection checker = db.connect()) {
      lock(mine);
      assertThat(NoLeakedLocks.heldLocks(checker)).hasSize(1).first().asString().contains("objid=" + KEY);
      unlock(mine);
      assertThat(NoLeakedLocks.heldLocks(checker)).isEmpty();
    }
  }

  private static void lock(Connection c) throws SQLException {
    query(c, "SELECT pg_advisory_lock(?)");
  }

  private static void unlock(Connection c) throws SQLException {
    query(c, "SELECT pg_advisory_unlock(?)");
  }

  private static void query(Connection c, String sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, KEY);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
      }
    }
  }
}
