package io.pglock.queue.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The statement that writes outcomes finds each job by its primary key, whatever the statistics say.
 * Statistics taken while nothing ran (a table analysed right after a bulk enqueue) put the running
 * rows near zero; with the state check written plainly, the generic plan then read every running row
 * through {@code job_running} once per outcome (a B10 burn-down fell from 47,000 to 12,000 jobs/s).
 */
class OutcomePlanTest {
  private final String schema = "pglock_plan_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);

  @BeforeEach
  void table() throws SQLException {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), schema);
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
      s.execute("INSERT INTO " + schema + ".job (queue, kind) SELECT 'q', 'k' FROM generate_series(1, 20000)");
      s.execute("ANALYZE " + schema + ".job"); // nothing running: job_running looks empty
      s.execute("UPDATE " + schema + ".job SET state = 'running', attempt = 1, owner = 7 WHERE id IN"
          + " (SELECT id FROM " + schema + ".job ORDER BY id LIMIT 2000)");
    }
  }

  @AfterEach
  void drop() throws SQLException {
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA " + schema + " CASCADE");
    }
  }

  @Test
  void outcomes_areFoundByPrimaryKey_inTheGenericPlan_evenWhenStatisticsSayNothingRuns() throws SQLException {
    String plan = genericPlan(new JobSql(schema, true).completeAdvisory);
    assertThat(plan).contains("job_pkey").doesNotContain("job_running");
  }

  @Test
  void aTransactionalSuccess_isFoundByPrimaryKey_too() throws SQLException {
    JobSql sql = new JobSql(schema, true);
    assertThat(genericPlan(sql.succeedInTransaction)).contains("job_pkey").doesNotContain("job_running");
    assertThat(genericPlan(sql.purgeInTransaction)).contains("job_pkey").doesNotContain("job_running");
  }

  /**
   * Pruning reads its own queue's finished jobs through {@code job_prune (queue, finished_at)}: through
   * {@code job_finished (finished_at)} each batch walked past every older finished job of every other
   * queue (seconds per batch beside ten million of them, in B17). And it deletes them by ctid: joined
   * by id, the generic plan hash-joined a sequential scan of the whole table.
   */
  @Test
  void pruning_readsItsOwnQueuesFinishedJobs_throughJobPrune() throws SQLException {
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
      s.execute("UPDATE " + schema + ".job SET state = 'succeeded', finished_at = now() - interval '2 days'"
          + " WHERE state = 'available'");
      // older finished jobs of other queues, kept longer: job_finished's order would walk past them
      s.execute("INSERT INTO " + schema + ".job (queue, kind, state, attempt, finished_at) SELECT 'other-' || (g % 5),"
          + " 'k', 'succeeded', 1, now() - interval '3 days' FROM generate_series(1, 50000) g");
      s.execute("ANALYZE " + schema + ".job");
    }
    // the parameters' types as the worker binds them (queue, four retentions in ms, the batch)
    String plan = genericPlan(new JobSql(schema, true).prune, "(text, bigint, bigint, bigint, bigint, int)");
    assertThat(plan).contains("job_prune").contains("Tid Scan").doesNotContain("Seq Scan");
  }

  /** EXPLAIN of the statement as the server runs it after a few executions: its generic plan. */
  private static String genericPlan(String statement) throws SQLException {
    return genericPlan(statement, "");
  }

  /** As above, with the parameters' types given ({@code "(text, bigint)"}), for those the text leaves open. */
  private static String genericPlan(String statement, String types) throws SQLException {
    // $1, $2, ... for the JDBC placeholders, as pgjdbc sends them
    StringBuilder numbered = new StringBuilder();
    int n = 0;
    for (char ch : statement.toCharArray()) {
      numbered.append(ch == '?' ? "$" + ++n : String.valueOf(ch));
    }
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
      s.execute("SET plan_cache_mode = force_generic_plan");
      s.execute("PREPARE outcome " + types + " AS " + numbered);
      StringBuilder nulls = new StringBuilder();
      for (int i = 0; i < n; i++) {
        nulls.append(i == 0 ? "" : ", ").append("NULL");
      }
      StringBuilder plan = new StringBuilder();
      try (ResultSet rs = s.executeQuery("EXPLAIN EXECUTE outcome(" + nulls + ")")) {
        while (rs.next()) {
          plan.append(rs.getString(1)).append('\n');
        }
      }
      return plan.toString();
    }
  }
}
