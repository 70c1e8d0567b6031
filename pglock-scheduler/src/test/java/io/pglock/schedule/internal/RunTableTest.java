package io.pglock.schedule.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.schedule.RunKind;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** RunTable's statements on the real database. */
class RunTableTest {
  private final String namespace = "rt-" + UUID.randomUUID().toString().substring(0, 8);
  private final RunTable table = new RunTable("pglock");

  @BeforeAll
  static void schema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @AfterEach
  void clean() throws Exception {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("DELETE FROM pglock.task_run WHERE namespace = ?")) {
      ps.setString(1, namespace);
      ps.execute();
    }
  }

  private static String show(Connection c) throws Exception {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW synchronous_commit")) {
      rs.next();
      return rs.getString(1);
    }
  }

  /**
   * Review of issue 14: a deciding statement raises only {@code synchronous_commit = off} (to
   * {@code on}), and keeps a stronger setting such as {@code remote_apply} (before, it forced
   * {@code on}, weakening it). Read inside the statement's transaction, where its setting holds.
   */
  @Test
  void aDecidingStatement_raisesOnlyOff_andKeepsRemoteApply() throws Exception {
    Instant past = Instant.parse("2026-01-01T00:00:00Z");
    String[][] cases = {{"off", "on"}, {"remote_apply", "remote_apply"}, {"local", "local"}, {"on", "on"}};
    int i = 0;
    for (String[] k : cases) {
      try (Connection c = TestDatabase.get().connect()) {
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
          st.execute("SET LOCAL synchronous_commit = " + k[0]);
        }
        table.skip(c, namespace, "t", List.of(past.plusSeconds(i++)), List.of(java.time.Duration.ZERO),
            RunKind.SCHEDULED, "x", "test");
        assertThat(show(c)).as("synchronous_commit %s, after a skip", k[0]).isEqualTo(k[1]);
        c.commit();
      }
    }
  }
}
