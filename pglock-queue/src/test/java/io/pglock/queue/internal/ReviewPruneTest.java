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

/**
 * Review finding (branch review-queue): a worker prunes finished jobs of every queue by its own
 * retention, not those of its queue. Safe on the shared database: the only rows old enough for the
 * 10-year retention used here are the test's own (finished in 2000).
 */
class ReviewPruneTest {

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
      int pruned = new LeaseClaims((DefaultJobQueue) jobs, config).prune(500);
      boolean still;
      try (Connection c = TestDatabase.get().connect();
          PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pglock.job WHERE id = ?")) {
        ps.setLong(1, id);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          still = rs.getLong(1) == 1;
        }
      }
      System.out.printf("F11: a worker of queue %s pruned %d row(s); job %d of queue %s %s%n", mine, pruned, id,
          otherQueue, still ? "kept" : "DELETED");
      assertThat(still).as("a finished job of another queue, after a prune by a worker of " + mine).isTrue();
    } finally {
      try (Connection c = TestDatabase.get().connect();
          PreparedStatement ps = c.prepareStatement("DELETE FROM pglock.job WHERE id = ?")) {
        ps.setLong(1, id);
        ps.execute();
      }
    }
  }
}
