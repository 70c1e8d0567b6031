package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The name table stays bounded (schema version 10): {@code prune_lock_names} deletes names not seen
 * for the retention period and the oldest past the cap, never the name of a lock held or awaited;
 * {@code record_lock_names} refreshes {@code last_seen} coarsely. In a schema of its own, so that
 * the deletions touch no other test's names.
 */
class LockNameRetentionTest extends PgLocksTestSupport {
  private static final String SCHEMA = "pglock_retention_test";

  @BeforeAll
  static void installSchema() throws SQLException {
    dropSchema();
    PgLockSchema.migrate(db().dataSource(), SCHEMA);
  }

  @AfterAll
  static void dropSchema() throws SQLException {
    try (Connection c = db().connect(); Statement st = c.createStatement()) {
      st.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
    }
  }

  @Test
  void prune_deletesOldNames_keepsFreshOnesAndThoseOfLockedKeys_thenEnforcesTheCap() throws Exception {
    Connection c = connect();
    exec(c, "TRUNCATE " + SCHEMA + ".lock_name");
    insert(c, "old-a", "now() - interval '2 days'");
    insert(c, "old-b", "now() - interval '25 hours'");
    insert(c, "old-held", "now() - interval '3 days'");
    insert(c, "legacy-held", "'-infinity'"); // as V10 marks the rows of earlier versions
    insert(c, "fresh-c", "now() - interval '1 hour'");
    insert(c, "fresh-d", "now() - interval '2 hours'");
    Connection holder = connect();
    lock(holder, "old-held");
    lock(holder, "legacy-held");

    assertThat(prune(c, "24 hours", 100_000, 5_000)).isEqualTo(2);
    assertThat(names(c)).containsExactlyInAnyOrder("old-held", "legacy-held", "fresh-c", "fresh-d");

    // Past the cap: the oldest-seen go first, never a locked one.
    assertThat(prune(c, "24 hours", 3, 5_000)).isEqualTo(1);
    assertThat(names(c)).containsExactlyInAnyOrder("old-held", "legacy-held", "fresh-c");
    assertThat(prune(c, "24 hours", 1, 5_000)).isEqualTo(1);
    assertThat(names(c)).containsExactlyInAnyOrder("old-held", "legacy-held");

    unlockAll(holder, "old-held");
    unlockAll(holder, "legacy-held");
    assertThat(prune(c, "24 hours", 100_000, 5_000)).isEqualTo(2);
    assertThat(names(c)).isEmpty();
  }

  @Test
  void prune_deletesAtMostABatchPerStatement() throws Exception {
    Connection c = connect();
    exec(c, "TRUNCATE " + SCHEMA + ".lock_name");
    for (int i = 0; i < 12; i++) {
      insert(c, "batch-" + i, "now() - interval '2 days'");
    }
    assertThat(prune(c, "24 hours", 100_000, 5)).isEqualTo(5);
    assertThat(prune(c, "24 hours", 100_000, 5)).isEqualTo(5);
    assertThat(prune(c, "24 hours", 100_000, 5)).isEqualTo(2);
    assertThat(names(c)).isEmpty();
  }

  @Test
  void prune_withBadArguments_isAnErrorNamingThem() throws Exception {
    Connection c = connect();
    assertThatThrownBy(() -> prune(c, "24 hours", 100, 0))
        .isInstanceOf(SQLException.class).hasMessageContaining("batch must be at least 1");
  }

  @Test
  void record_refreshesLastSeenAtMostHourly_andTakesANameTwiceInOneCall() throws Exception {
    Connection c = connect();
    exec(c, "TRUNCATE " + SCHEMA + ".lock_name");
    assertThat(record(c, "twice", "twice", "once")).isEqualTo(2);
    exec(c, "UPDATE " + SCHEMA + ".lock_name SET last_seen = now() - interval '10 minutes' WHERE name = 'twice'");
    exec(c, "UPDATE " + SCHEMA + ".lock_name SET last_seen = now() - interval '2 hours' WHERE name = 'once'");
    assertThat(record(c, "twice", "once")).isEqualTo(1); // only the one not seen for an hour is written
    assertThat(ageSeconds(c, "twice")).isBetween(500L, 700L);
    assertThat(ageSeconds(c, "once")).isLessThan(60L);
  }

  @Test
  void recordLocked_recordsOnlyNamesOfLockedKeys_andOnlyUnderTheirOwnKey() throws Exception {
    Connection c = connect();
    exec(c, "TRUNCATE " + SCHEMA + ".lock_name");
    Connection holder = connect();
    lock(holder, "locked-now");
    long locked = LockKey.named("test", "locked-now").int64();
    long free = LockKey.named("test", "free-now").int64();
    try (PreparedStatement ps = c.prepareStatement("SELECT " + SCHEMA + ".record_locked_names(?, ?, ?)")) {
      // "liar" claims the locked key, which it does not hash to: refused
      ps.setArray(1, c.createArrayOf("bigint", new Long[] {locked, free, locked}));
      ps.setArray(2, c.createArrayOf("text", new String[] {"test", "test", "test"}));
      ps.setArray(3, c.createArrayOf("text", new String[] {"locked-now", "free-now", "liar"}));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(1);
      }
    }
    assertThat(names(c)).containsExactly("locked-now");
    unlockAll(holder, "locked-now");
  }

  private static void exec(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private static void insert(Connection c, String name, String lastSeen) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + SCHEMA + ".lock_name (key, namespace, name, "
        + "last_seen) VALUES (" + SCHEMA + ".key('test', ?), 'test', ?, " + lastSeen + ")")) {
      ps.setString(1, name);
      ps.setString(2, name);
      ps.execute();
    }
  }

  private static void lock(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_lock(?)")) {
      ps.setLong(1, LockKey.named("test", name).int64());
      ps.execute();
    }
  }

  private static void unlockAll(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_unlock(?)")) {
      ps.setLong(1, LockKey.named("test", name).int64());
      ps.execute();
    }
  }

  private static int prune(Connection c, String retention, int maxRows, int batch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT " + SCHEMA + ".prune_lock_names(?::interval, ?, ?)")) {
      ps.setString(1, retention);
      ps.setInt(2, maxRows);
      ps.setInt(3, batch);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static int record(Connection c, String... names) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT " + SCHEMA + ".record_lock_names(?, ?)")) {
      String[] namespaces = new String[names.length];
      java.util.Arrays.fill(namespaces, "test");
      Array ns = c.createArrayOf("text", namespaces);
      ps.setArray(1, ns);
      ps.setArray(2, c.createArrayOf("text", names));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static long ageSeconds(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT extract(epoch FROM now() - last_seen)::bigint FROM "
        + SCHEMA + ".lock_name WHERE name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static List<String> names(Connection c) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT name FROM " + SCHEMA + ".lock_name")) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }
}
