package io.pglock.queue.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.queue.JobQueue;
import io.pglock.queue.WorkerConfig;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Pruning of finished jobs, one batch at a time, as a worker's I/O thread does it. */
class JobPruneTest {

  /**
   * A worker prunes the finished jobs of its own queue only, by its own retention: a finished job of
   * another queue stays, however old.
   *
   * <p>Found in review (F11): the prune statement had no queue condition, so a worker deleted the
   * finished jobs of every queue by its own retention, not those of its queue.
   *
   * <p>Safe on the shared database: with the 10-year retention used here, the only rows old enough
   * are the test's own (finished in 2000), and it deletes its row itself.
   */
  @Test
  void aWorkerPrunes_onlyItsOwnQueuesFinishedJobs() throws Exception {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
    String otherQueue = "q-" + UUID.randomUUID().toString().substring(0, 8);
    long id;
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("INSERT INTO pglock.job (queue, kind, state, finished_at)"
            + " VALUES (?, 'k', 'succeeded', '2000-01-01') RETURNING id")) {
      ps.setString(1, otherQueue);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        id = rs.getLong(1);
      }
    }
    try (PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).namespace("queue-test").build();
        JobQueue jobs = JobQueue.builder(locks).build()) {
      String mine = "q-" + UUID.randomUUID().toString().substring(0, 8);
      WorkerConfig config = jobs.worker(mine).retention(Duration.ofDays(3653)).discardedRetention(Duration.ofDays(3653))
          .handler("k", Object.class, (p, job) -> { }).config();
      new LeaseClaims((DefaultJobQueue) jobs, config).prune(500);
      try (Connection c = TestDatabase.get().connect();
          PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pglock.job WHERE id = ?")) {
        ps.setLong(1, id);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertThat(rs.getLong(1)).as("finished job %d of queue %s, after a prune by a worker of %s", id, otherQueue,
              mine).isEqualTo(1);
        }
      }
    } finally {
      try (Connection c = TestDatabase.get().connect();
          PreparedStatement ps = c.prepareStatement("DELETE FROM pglock.job WHERE id = ?")) {
        ps.setLong(1, id);
        ps.execute();
      }
    }
  }
}
