package io.pglock.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.testing.Await;
import io.pglock.testing.PrivateServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A claim is the job's fencing token (its attempt number), so it must be on disk before the handler
 * starts, whatever {@code synchronous_commit} says: on a server of the test's own running with
 * {@code synchronous_commit = off} and a WAL writer that flushes every 10 s only, crashed
 * ({@code pg_ctl stop -m immediate}) while the first attempt runs, the next attempt is number 2,
 * never a second number 1, in either claim mode.
 */
class JobDurabilityTest {
  private static final String[] LOSSY = {"synchronous_commit=off", "wal_writer_delay=10s", "autovacuum=off"};

  @ParameterizedTest
  @EnumSource(ClaimMode.class)
  void aCrashRightAfterAClaim_theNextAttemptHasAHigherNumber(ClaimMode mode) throws Exception {
    try (PrivateServer server = lossyServer()) {
      DataSource ds = server.dataSource("pglock-durability-test");
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
      List<Integer> attempts = new CopyOnWriteArrayList<>();
      CountDownLatch firstStarted = new CountDownLatch(1);
      CountDownLatch restarted = new CountDownLatch(1);
      try (PgLocks locks = locks(ds);
          JobQueue jobs = JobQueue.builder(locks).build()) {
        long id = jobs.enqueue(JobRequest.of("work", null).queue("durable")).id();
        checkpoint(ds); // the job row on disk: only the claim is at stake
        JobWorker worker = jobs.worker("durable").claimMode(mode).lease(Duration.ofSeconds(5))
            .pollInterval(Duration.ofMillis(100)).rescueInterval(Duration.ofMillis(200)).shutdownTimeout(Duration.ZERO)
            .handler("work", Object.class, (p, job) -> {
              attempts.add(job.attempt());
              if (attempts.size() == 1) {
                firstStarted.countDown();
                // the first attempt lasts until the server is back, or until its worker lost the job with
                // the server (advisory mode: the lock went with the connection; lease mode keeps it)
                while (!job.shouldStop() && restarted.getCount() > 0) {
                  Thread.onSpinWait();
                }
              }
            }).start();
        assertThat(firstStarted.await(60, TimeUnit.SECONDS)).as("the first attempt started").isTrue();
        server.stopImmediate(); // right after the claim's commit was acknowledged
        server.startServer();
        restarted.countDown();
        Await.until("the job succeeded", Duration.ofSeconds(90),
            () -> "succeeded".equals(state(ds, id)));
        assertThat(attempts).as("attempt numbers seen by the handler, in order: each a new one").first().isEqualTo(1);
        assertThat(attempts).as("attempt numbers seen by the handler, in order: each a new one")
            .isSorted().doesNotHaveDuplicates();
        worker.close();
      }
    }
  }

  /**
   * A handler in a transaction: once its attempt ended as succeeded (its commit acknowledged), a
   * crash of the lazily committing server keeps both its write and the job's success, so the job is
   * not run again; with a retention of zero, the same commit deleted the job's row, and it stays
   * deleted.
   */
  @ParameterizedTest(name = "retention zero: {0}")
  @ValueSource(booleans = {false, true})
  void aCrashRightAfterATransactionalHandlersCommit_keepsItsWriteAndTheJobsSuccess(boolean retentionZero)
      throws Exception {
    try (PrivateServer server = lossyServer()) {
      DataSource ds = server.dataSource("pglock-durability-test");
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
      try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
          "CREATE TABLE durable_counter (k int PRIMARY KEY, n int NOT NULL); INSERT INTO durable_counter VALUES (1, 0)")) {
        ps.execute();
      }
      List<Integer> attempts = new CopyOnWriteArrayList<>();
      CountDownLatch succeeded = new CountDownLatch(1);
      long id;
      try (PgLocks locks = locks(ds);
          JobQueue jobs = JobQueue.builder(locks).build()) {
        id = jobs.enqueue(JobRequest.of("add", null).queue("durable")).id();
        checkpoint(ds); // the job row and the counter on disk: only the handler's commit is at stake
        JobWorker worker = jobs.worker("durable").pollInterval(Duration.ofMillis(100)).shutdownTimeout(Duration.ZERO)
            .retention(retentionZero ? Duration.ZERO : Duration.ofDays(1))
            .listener(new JobListener() {
              @Override
              public void attemptEnded(String queue, String kind, AttemptResult result, long durationNanos) {
                if (result == AttemptResult.SUCCEEDED) {
                  succeeded.countDown();
                }
              }
            })
            .handlerInTransaction("add", Object.class, (p, job, tx) -> {
              attempts.add(job.attempt());
              try (PreparedStatement ps = tx.prepareStatement("UPDATE durable_counter SET n = n + 1 WHERE k = 1")) {
                ps.executeUpdate();
              }
            }).start();
        assertThat(succeeded.await(60, TimeUnit.SECONDS)).as("the attempt committed").isTrue();
        server.stopImmediate(); // right after the commit was acknowledged
        server.startServer();
        Await.until("the server answers", Duration.ofSeconds(90), () -> state(ds, id) != null);
        worker.close();
      }
      assertThat(state(ds, id)).as("the job's success survived the crash")
          .isEqualTo(retentionZero ? "gone" : "succeeded");
      try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
          "SELECT n FROM durable_counter WHERE k = 1"); ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getInt(1)).as("the handler's write survived the crash, once").isEqualTo(1);
      }
      assertThat(attempts).as("one attempt: the job did not run again").containsExactly(1);
    }
  }

  /**
   * A plain handler with a retention of zero: the outcome that deletes the succeeded job's row commits
   * durably before the worker counts it finished, so a crash right after leaves no row to run again
   * (a lost delete would leave it running under a dead owner, run a second time once rescued).
   */
  @ParameterizedTest
  @EnumSource(ClaimMode.class)
  void aCrashRightAfterADeletingOutcome_leavesTheJobDeleted(ClaimMode mode) throws Exception {
    try (PrivateServer server = lossyServer()) {
      DataSource ds = server.dataSource("pglock-durability-test");
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
      List<Integer> attempts = new CopyOnWriteArrayList<>();
      long id;
      try (PgLocks locks = locks(ds);
          JobQueue jobs = JobQueue.builder(locks).build()) {
        id = jobs.enqueue(JobRequest.of("work", null).queue("durable")).id();
        checkpoint(ds); // the job row on disk: only the outcome is at stake
        JobWorker worker = jobs.worker("durable").claimMode(mode).lease(Duration.ofSeconds(5))
            .retention(Duration.ZERO).pollInterval(Duration.ofMillis(100)).rescueInterval(Duration.ofMillis(200))
            .shutdownTimeout(Duration.ZERO)
            .handler("work", Object.class, (p, job) -> attempts.add(job.attempt())).start();
        // counted once the statement that deleted the row was acknowledged
        Await.until("the outcome was written", Duration.ofSeconds(60), () -> worker.finished() == 1);
        server.stopImmediate();
        server.startServer();
        Await.until("the server answers", Duration.ofSeconds(90), () -> state(ds, id) != null);
        assertThat(state(ds, id)).as("the job's row, deleted by its outcome before the crash").isEqualTo("gone");
        worker.close();
      }
      assertThat(attempts).as("one attempt: the job did not run again").containsExactly(1);
    }
  }

  /** A server of the test's own that commits lazily; the test is skipped where none can run. */
  private static PrivateServer lossyServer() throws Exception {
    try {
      return PrivateServer.start(LOSSY);
    } catch (PrivateServer.Unavailable e) {
      assumeTrue(false, "no private PostgreSQL server here: " + e.getMessage());
      throw e; // not reached: the assumption ends the test
    }
  }

  private static PgLocks locks(DataSource ds) {
    return PgLocks.builder(ds).namespace("durable").nodeName("durable").connectTimeout(Duration.ofSeconds(30))
        .lease(Duration.ofSeconds(5)).build();
  }

  /** The job's state; null while the server does not answer (it is restarting). */
  private static String state(DataSource ds, long id) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT state FROM pglock.job WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : "gone";
      }
    } catch (java.sql.SQLException e) {
      return null;
    }
  }

  private static void checkpoint(DataSource ds) throws Exception {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("CHECKPOINT")) {
      ps.execute();
    }
  }
}
