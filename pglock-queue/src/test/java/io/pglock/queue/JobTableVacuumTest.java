package io.pglock.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * With autovacuum off for the job table (here its {@code autovacuum_enabled} storage parameter, so
 * that the test does not depend on the server's setting), the workers vacuum it once pruning has left
 * enough dead rows: the space of pruned jobs is reused instead of the table growing without end.
 * A schema of its own, so that the dead rows counted are this test's.
 */
@ExtendWith(NoLeakedLocks.class)
class JobTableVacuumTest {
  private static final int OLD_JOBS = 30_000;
  private final String schema = "pglock_vacuum_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);

  @AfterEach
  void drop() throws SQLException {
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }

  @Test
  void autovacuumOff_theWorkersVacuumTheTable_oncePruningLeftDeadRows() throws Exception {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), schema);
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
      s.execute("ALTER TABLE " + schema + ".job SET (autovacuum_enabled = false)");
      s.execute("INSERT INTO " + schema + ".job (queue, kind, state, attempt, finished_at) SELECT 'old', 'ping',"
          + " 'succeeded', 1, now() - interval '2 days' FROM generate_series(1, " + OLD_JOBS + ")");
    }
    assertThat(lastVacuumed()).isFalse();
    try (PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).schema(schema).namespace("queue-test")
        .nodeName("vacuum-test").build();
        JobQueue jobs = JobQueue.builder(locks).build();
        JobWorker worker = jobs.worker("old").retention(Duration.ofDays(1))
            .handler("ping", Integer.class, (n, job) -> { }).start()) {
      // pruning: the first round 8-12 s after the start, then a round a second while they come back full
      Await.until("the old jobs are pruned", Duration.ofSeconds(60), () -> count() == 0);
      // a check at most every 10 s, once the server's statistics show the dead rows
      Await.until("the job table is vacuumed", Duration.ofSeconds(90), this::lastVacuumed);
      assertThat(worker.finished()).isZero(); // pruning, not jobs, left the dead rows
    }
    assertThat(lastVacuumed()).isTrue();
    assertThat(deadRows()).as("dead rows after the vacuum").isLessThan(OLD_JOBS / 2);
  }

  private boolean lastVacuumed() {
    return query("SELECT (pg_stat_get_last_vacuum_time(to_regclass(?)) IS NOT NULL)::int") == 1;
  }

  private long deadRows() {
    return query("SELECT pg_stat_get_dead_tuples(to_regclass(?))");
  }

  private long count() {
    return query("SELECT count(*) FROM " + schema + ".job WHERE queue = ?", "old");
  }

  private long query(String sql) {
    return query(sql, schema + ".job");
  }

  /** One number, unchecked: for condition waits. */
  private static long query(String sql, String parameter) {
    try (Connection c = TestDatabase.get().connect(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, parameter);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
