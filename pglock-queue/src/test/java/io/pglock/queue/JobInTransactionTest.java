package io.pglock.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Handlers in a transaction ({@link TransactionalJobHandler}): the handler's writes and the job's
 * success commit together, a failed attempt leaves no write, and an attempt that lost the job to
 * another worker commits nothing, even when it gets to its commit after the other took over.
 */
@ExtendWith(NoLeakedLocks.class)
class JobInTransactionTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private final QueueFixture f = new QueueFixture();
  private final String counter = "tx_counter_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

  record Add(long key) {}

  @BeforeEach
  void table() throws SQLException {
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE " + counter + " (key bigint PRIMARY KEY, n int NOT NULL DEFAULT 0)");
      s.execute("INSERT INTO " + counter + " (key) SELECT generate_series(0, 99)");
    }
  }

  @AfterEach
  void close() throws Exception {
    try {
      f.close();
    } finally {
      try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS " + counter);
      }
    }
  }

  private JobWorkerBuilder worker(JobQueue jobs) {
    return jobs.worker(f.queue).pollInterval(Duration.ofMillis(200)).shutdownTimeout(Duration.ofSeconds(5))
        .backoff(attempt -> Duration.ofMillis(10));
  }

  private void add(Connection tx, long key) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement("UPDATE " + counter + " SET n = n + 1 WHERE key = ?")) {
      ps.setLong(1, key);
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }

  @Test
  void everyJobsWrite_commitsWithItsSuccess_once() throws Exception {
    JobQueue jobs = f.jobs("n1");
    List<JobRequest> batch = new ArrayList<>();
    for (long k = 0; k < 100; k++) {
      batch.add(f.job("add", new Add(k)));
    }
    jobs.enqueueAll(batch);
    AtomicBoolean autoCommitSeen = new AtomicBoolean();
    f.closeLater(worker(jobs).concurrency(4).handlerInTransaction("add", Add.class, (add, job, tx) -> {
      autoCommitSeen.compareAndSet(false, tx.getAutoCommit());
      add(tx, add.key());
    }).start());
    Await.until("100 succeeded", WAIT, () -> f.count("state = 'succeeded'") == 100);
    assertThat(counts()).hasSize(100);
    assertThat(counts().values()).as("each counter once").containsOnly(1);
    assertThat(autoCommitSeen.get()).as("the handler's connection is in a transaction").isFalse();
  }

  @Test
  void aFailedAttempt_leavesNoWrite_theRetryWritesOnce() throws Exception {
    JobQueue jobs = f.jobs("n1");
    long id = jobs.enqueue(f.job("add", new Add(7))).id();
    f.closeLater(worker(jobs).handlerInTransaction("add", Add.class, (add, job, tx) -> {
      add(tx, add.key());
      if (job.attempt() < 3) {
        throw new IllegalStateException("after the write, attempt " + job.attempt());
      }
    }).start());
    Await.until("succeeded", WAIT, () -> f.count("state = 'succeeded'") == 1);
    Job job = jobs.admin().job(id).orElseThrow();
    assertThat(job.attempt()).isEqualTo(3);
    assertThat(job.errors()).extracting(JobError::attempt).containsExactly(1, 2);
    assertThat(counts().get(7)).as("only the third attempt's write").isEqualTo(1);
  }

  /**
   * Worker n1's attempt writes, then stalls (deaf to the interrupt its loss brings); its lock session
   * is terminated, so another attempt takes the job over (n2's, or n1's on a new session) and waits
 * for the counter's row. When
   * n1's attempt goes on to commit, its check finds the job at attempt 2: it rolls back, n2's write
   * goes through, and the counter ends at 1.
   */
  @Test
  void anAttemptThatLostTheJob_commitsNothing_whenItComesToCommitLate() throws Exception {
    JobQueue first = f.jobs("n1");
    JobQueue second = f.jobs("n2");
    long id = first.enqueue(f.job("add", new Add(42))).id();
    CountDownLatch written = new CountDownLatch(1);
    CountDownLatch goOn = new CountDownLatch(1);
    ConcurrentHashMap<Integer, String> endings = new ConcurrentHashMap<>();
    TransactionalJobHandler<Add> handler = (add, job, tx) -> {
      add(tx, add.key());
      if (job.attempt() == 1) {
        written.countDown();
        awaitUninterruptibly(goOn); // a stalled handler that does not hear its loss
      }
      endings.put(job.attempt(), "handled");
    };
    f.closeLater(worker(first).handlerInTransaction("add", Add.class, handler).start());
    assertThat(written.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("attempt 1 wrote").isTrue();

    f.closeLater(worker(second).rescueInterval(Duration.ofMillis(200)).handlerInTransaction("add", Add.class, handler)
        .start());
    List<Integer> pids = QueueFixture.workerPids("n1");
    assertThat(pids).isNotEmpty();
    try (Connection c = TestDatabase.get().connect(); PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
      for (int pid : pids) {
        ps.setInt(1, pid);
        ps.execute();
      }
    }
    Await.until("another attempt took the job over", WAIT, () -> f.count("attempt = 2 AND state = 'running'") == 1);
    goOn.countDown();
    Await.until("succeeded", WAIT, () -> f.count("state = 'succeeded'") == 1);
    Job job = first.admin().job(id).orElseThrow();
    assertThat(job.attempt()).isEqualTo(2);
    assertThat(counts().get(42)).as("attempt 1's write rolled back, attempt 2's committed").isEqualTo(1);
    assertThat(endings).containsKeys(1, 2);
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    boolean interrupted = false;
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (System.nanoTime() < deadline) {
      try {
        if (latch.await(100, TimeUnit.MILLISECONDS)) {
          break;
        }
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private java.util.Map<Integer, Integer> counts() throws SQLException {
    java.util.Map<Integer, Integer> n = new java.util.HashMap<>();
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT key, n FROM " + counter + " WHERE n > 0 OR key < 100")) {
      while (rs.next()) {
        n.put(rs.getInt(1), rs.getInt(2));
      }
    }
    return n;
  }
}
