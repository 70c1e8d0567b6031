package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.testing.Await;
import io.pglock.testing.PrivateServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A name the server refuses does not keep the innocent names of its batch out of the view. The
 * server decides: a database in LATIN1 cannot store a snowman (SQLSTATE 22P05), which a Java string
 * and a lock key can carry. On a private server, which may have a database of another encoding.
 */
class LockNameBatchFailureTest {

  @Test
  void nameTheDatabaseCannotStore_doesNotKeepTheOthersOfItsBatchOut() throws Exception {
    PrivateServer server;
    try {
      server = PrivateServer.start();
    } catch (PrivateServer.Unavailable e) {
      assumeTrue(false, "no private server here: " + e.getMessage());
      return;
    }
    try (server) {
      try (Connection c = server.dataSource("create").getConnection(); Statement st = c.createStatement()) {
        st.execute("CREATE DATABASE latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
      }
      PGSimpleDataSource ds = new PGSimpleDataSource();
      ds.setURL("jdbc:postgresql://127.0.0.1:" + server.port() + "/latin1");
      ds.setUser("postgres");
      ds.setConnectTimeout(30);
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
      try (PgLocks locks = PgLocks.builder(ds).namespace("test").connectTimeout(Duration.ofSeconds(30)).build();
          LockHandle first = locks.lock("innocent-1").tryAcquire().orElseThrow();
          LockHandle snowman = locks.lock("snowman-\u2603").tryAcquire().orElseThrow();
          LockHandle second = locks.lock("innocent-2").tryAcquire().orElseThrow()) {
        // Noted together, so due at the same sweep, in one batch.
        Await.until("the innocent names are recorded", Duration.ofSeconds(30),
            () -> recorded(ds, "innocent-%") == 2);
        assertThat(recorded(ds, "snowman-%")).isZero();
        assertThat(first.isHeld() && snowman.isHeld() && second.isHeld()).isTrue();
      }
    }
  }

  private static int recorded(DataSource ds, String pattern) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pglock.lock_name WHERE name LIKE ?")) {
      ps.setString(1, pattern);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }
}
