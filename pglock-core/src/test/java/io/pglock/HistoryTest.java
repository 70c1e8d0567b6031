package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The lock history: every run's hold recorded, with how it ended, off the caller's path. */
class HistoryTest extends PgLocksTestSupport {

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  private static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID();
  }

  @Test
  void releasedAndFailedHolds_areRecordedWithHolderAndError() throws Exception {
    PgLocks locks = track(builder().nodeName("hist-node").history().build());
    String name = unique("hist");
    Integer answer = locks.lock(name).run(Duration.ofSeconds(5), h -> 42);
    assertThat(answer).isEqualTo(42);
    assertThatThrownBy(() -> locks.lock(name).run(Duration.ofSeconds(5), h -> {
      throw new IllegalStateException("invoice 42 has no customer");
    })).isInstanceOf(IllegalStateException.class).hasMessage("invoice 42 has no customer");
    assertThatThrownBy(() -> locks.lock(name).run(Duration.ofSeconds(5), h -> {
      throw new IOException("disk full");
    })).isInstanceOf(LockedWorkException.class).hasCauseInstanceOf(IOException.class);

    Connection c = connect();
    await("three holds recorded and ended", Duration.ofSeconds(10), () -> rows(c, name, "outcome <> 'open'").size() == 3);
    List<String> rows = rows(c, name, "true");
    assertThat(rows).containsExactly(
        "released hist-node null null",
        "failed hist-node java.lang.IllegalStateException invoice 42 has no customer",
        "failed hist-node java.io.IOException disk full");
    try (PreparedStatement ps = c.prepareStatement("SELECT bool_and(pid > 0 AND released_at >= acquired_at "
        + "AND key = pglock.key('test', name)), max(error_stack) FROM pglock.history WHERE name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getBoolean(1)).isTrue();
        assertThat(rs.getString(2)).contains("at io.pglock.HistoryTest");
      }
    }
  }

  @Test
  void lostWhileTheWorkRan_isRecordedAsLost_andReported() throws Exception {
    PgLocks locks = track(builder().history().build());
    String name = unique("hist-lost");
    Connection admin = connect();
    assertThatThrownBy(() -> locks.lock(name).run(Duration.ofSeconds(5), h -> {
      int pid = holderPids(admin, locks.key(name)).get(0);
      try (PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(?, 10000)")) {
        ps.setInt(1, pid);
        ps.execute();
      }
      await("the holder learns", Duration.ofSeconds(10), () -> !h.isHeld());
      return "done";
    })).isInstanceOf(LockNotHeldException.class).hasMessageContaining("lost while the work ran");
    await("the hold is recorded as lost", Duration.ofSeconds(10),
        () -> rows(admin, name, "true").equals(List.of("lost " + locks.config().nodeName() + " null null")));
    try (PreparedStatement ps = admin.prepareStatement("SELECT loss_cause FROM pglock.history WHERE name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getString(1)).isEqualTo("CONNECTION_LOST");
      }
    }
  }

  @Test
  void holdOfADeadHolder_isClosedAsDisconnected_byTheNextNodeToTakeTheLock() throws Exception {
    PgLocks locks = track(builder().history().build());
    String name = unique("hist-dead");
    Connection admin = connect();
    // a holder whose backend is gone, its hold still open: as if its JVM had been killed
    Connection dying = connect();
    int deadPid;
    try (PreparedStatement ps = dying.prepareStatement("SELECT pg_backend_pid()"); ResultSet rs = ps.executeQuery()) {
      rs.next();
      deadPid = rs.getInt(1);
    }
    try (PreparedStatement ps = admin.prepareStatement("""
        SELECT pglock.record_holds(ARRAY[?]::bigint[], ARRAY['test'], ARRAY[?], ARRAY[pglock.key('test', ?)],
            ARRAY['dead-node'], ARRAY[?]::int[], ARRAY[(SELECT backend_start FROM pg_stat_activity WHERE pid = ?)],
            ARRAY[now()], ARRAY[NULL]::timestamptz[], ARRAY['open'], ARRAY[NULL]::text[], ARRAY[NULL]::text[],
            ARRAY[NULL]::text[], ARRAY[NULL]::text[]), pg_terminate_backend(?, 10000)""")) {
      ps.setLong(1, 7_000_000_000_000L + (System.nanoTime() & 0xFFFFFF));
      ps.setString(2, name);
      ps.setString(3, name);
      ps.setInt(4, deadPid);
      ps.setInt(5, deadPid);
      ps.setInt(6, deadPid);
      ps.execute();
    }
    assertThat(rows(admin, name, "true")).containsExactly("open dead-node null null");
    locks.lock(name).run(Duration.ofSeconds(5), h -> null);
    await("the dead holder's hold is closed", Duration.ofSeconds(10),
        () -> rows(admin, name, "node = 'dead-node'").equals(List.of("disconnected dead-node null null")));
  }

  @Test
  void withoutHistory_runRecordsNothing_andHistoryNeedsTheSchema() throws Exception {
    PgLocks locks = newLocks();
    String name = unique("hist-none");
    Boolean held = locks.lock(name).run(Duration.ofSeconds(5), h -> h.isHeld());
    assertThat(held).isTrue();
    assertThatThrownBy(() -> track(builder().schema("pglock_not_installed").history().build()))
        .isInstanceOf(SchemaMissingException.class).hasMessageContaining("version 4");
    PgLocks withHistoryPerLock = newLocks();
    String x = withHistoryPerLock.lock(name).withHistory().run(Duration.ofSeconds(5), h -> "x");
    assertThat(x).isEqualTo("x");
    Connection c = connect();
    await("the per-lock history records one hold", Duration.ofSeconds(10), () -> rows(c, name, "true").size() == 1);
  }

  @Test
  void close_writesTheLastHoldsBeforeItReturns() throws Exception {
    PgLocks locks = builder().history().build();
    String name = unique("hist-close");
    for (int i = 0; i < 3; i++) {
      locks.lock(name).run(Duration.ofSeconds(5), h -> null);
    }
    locks.close(); // a short-lived process (pglock run, a batch job) exits right after this
    assertThat(rows(connect(), name, "outcome = 'released'")).hasSize(3);
  }

  @Test
  void timesAreInstants_whateverTheSessionTimeZone() throws Exception {
    org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
    ds.setURL(db().jdbcUrl());
    if (db().user() != null) {
      ds.setUser(db().user());
    }
    if (db().password() != null) {
      ds.setPassword(db().password());
    }
    // a zone that is never the JVM's here, on either side of UTC
    String zone = java.util.TimeZone.getDefault().getRawOffset() == -5 * 3_600_000 ? "Asia/Kolkata" : "America/New_York";
    ds.setOptions("-c TimeZone=" + zone);
    PgLocks locks = track(PgLocks.builder(ds).namespace("test").history().build());
    String name = unique("hist-zone");
    locks.lock(name).run(Duration.ofSeconds(5), h -> null);
    Connection c = connect();
    await("the hold is recorded", Duration.ofSeconds(10), () -> rows(c, name, "outcome = 'released'").size() == 1);
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT abs(extract(epoch FROM now() - acquired_at)) FROM pglock.history WHERE name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getDouble(1)).as("seconds between the recorded acquisition and now").isLessThan(60);
      }
    }
  }

  private static List<String> rows(Connection c, String name, String where) {
    try (PreparedStatement ps = c.prepareStatement("SELECT outcome || ' ' || node || ' ' || coalesce(error_class, 'null')"
        + " || ' ' || coalesce(error_message, 'null') FROM pglock.history WHERE name = ? AND " + where
        + " ORDER BY acquired_at, id")) {
      ps.setString(1, name);
      List<String> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(rs.getString(1));
        }
      }
      return rows;
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }
}
