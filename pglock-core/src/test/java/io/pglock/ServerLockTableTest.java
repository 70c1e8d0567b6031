package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * On a server of its own with a tiny lock table (about 320 entries), pglock's automatic cap stops it
 * well before the table fills, and a cap set too high ends in a clear error, after which the server
 * serves everyone again. Being its own, the server also lets a test revoke CONNECT.
 */
class ServerLockTableTest {
  private static EmbeddedPostgres small;

  @BeforeAll
  static void startSmallServer() throws Exception {
    small = EmbeddedPostgres.builder()
        .setServerConfig("max_locks_per_transaction", "10")
        .setServerConfig("max_connections", "10")
        .start();
  }

  @AfterAll
  static void stopSmallServer() throws Exception {
    if (small != null) {
      small.close();
    }
  }

  private static DataSource dataSource() {
    return small.getPostgresDatabase();
  }

  @Test
  void automaticCap_isAQuarterOfTheServerLockTable_andStopsPglockFirst() throws Exception {
    try (PgLocks locks = PgLocks.builder(dataSource()).namespace("cap").build()) {
      int table = 10 * (10 + 0 + 3 + 8 + 10 + 1);
      assertThat(locks.maxHeldLocks()).isEqualTo(table / 4);
      List<LockHandle> held = new ArrayList<>();
      for (int i = 0; i < locks.maxHeldLocks(); i++) {
        held.add(locks.lock("k" + i).tryAcquire().orElseThrow());
      }
      assertThatThrownBy(() -> locks.lock("one-more").tryAcquire()).isInstanceOf(LockCapacityException.class)
          .hasMessageContaining("automatic");
      assertThat(serverAnswers()).isTrue();
      held.forEach(LockHandle::close);
    }
  }

  @Test
  void capAboveTheServerLockTable_failsClearly_andTheServerRecovers() throws Exception {
    try (PgLocks locks = PgLocks.builder(dataSource()).namespace("full").maxHeldLocks(1_000_000).build()) {
      List<LockHandle> held = new ArrayList<>();
      LockCapacityException full = null;
      for (int i = 0; i < 100_000 && full == null; i++) {
        try {
          held.add(locks.lock("k" + i).tryAcquire().orElseThrow());
        } catch (LockCapacityException e) {
          full = e;
        }
      }
      assertThat(full).isNotNull();
      assertThat(full.getMessage()).contains("lock table is full").contains("53200");
      // the session that hit it was closed, which freed its locks: the server serves everyone again
      assertThat(held).allMatch(h -> h.state() == HandleState.LOST);
      assertThat(serverAnswers()).isTrue();
      try (LockHandle again = locks.lock("after").tryAcquire().orElseThrow()) {
        assertThat(again.isHeld()).isTrue();
      }
    }
  }

  @Test
  void roleWithoutConnect_isMissingPrivilege_namingTheGrant() throws Exception {
    try (Connection admin = dataSource().getConnection(); Statement st = admin.createStatement()) {
      st.execute("CREATE ROLE no_connect LOGIN");
      st.execute("REVOKE CONNECT ON DATABASE postgres FROM PUBLIC");
    }
    try {
      org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
      ds.setURL(small.getJdbcUrl("no_connect", "postgres"));
      assertThatThrownBy(() -> PgLocks.builder(ds).build()).isInstanceOf(MissingPrivilegeException.class)
          .hasMessageContaining("GRANT CONNECT ON DATABASE");
    } finally {
      try (Connection admin = dataSource().getConnection(); Statement st = admin.createStatement()) {
        st.execute("GRANT CONNECT ON DATABASE postgres TO PUBLIC");
        st.execute("DROP ROLE no_connect");
      }
    }
  }

  private static boolean serverAnswers() throws Exception {
    try (Connection c = dataSource().getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_class")) {
      return rs.next() && rs.getInt(1) > 0;
    }
  }
}
