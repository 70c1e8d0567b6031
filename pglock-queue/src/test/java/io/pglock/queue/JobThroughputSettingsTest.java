package io.pglock.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The settings a worker of quick jobs runs fastest with: a retention of zero, whose outcome deletes a
 * succeeded job's row in the statement that records it (failed jobs are kept as their own retention
 * says), and more than one session, each claiming and completing its share of the jobs.
 */
@ExtendWith(NoLeakedLocks.class)
class JobThroughputSettingsTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private final QueueFixture f = new QueueFixture();

  @AfterEach
  void close() throws Exception {
    f.close();
  }

  @Test
  void retentionZero_deletesEachSucceededJob_andKeepsTheDiscardedOnesWithTheirErrors() throws Exception {
    JobQueue jobs = f.jobs("n1");
    AtomicInteger ok = new AtomicInteger();
    JobWorker worker = f.closeLater(jobs.worker(f.queue).concurrency(4).retention(Duration.ZERO)
        .pollInterval(Duration.ofMillis(200)).maxAttempts("fails", 1)
        .handler("ok", Integer.class, (n, job) -> ok.incrementAndGet())
        .handler("fails", Integer.class, (n, job) -> {
          throw new IllegalStateException("no " + n);
        }).start());
    List<JobRequest> batch = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      batch.add(f.job("ok", i));
    }
    for (int i = 0; i < 5; i++) {
      batch.add(f.job("fails", i));
    }
    jobs.enqueueAll(batch);
    Await.until("every job ended", WAIT, () -> worker.finished() == 205 && f.count("true") == 5);
    assertThat(ok.get()).isEqualTo(200); // each ran once: none lost, none run twice
    assertThat(f.count("kind = 'ok'")).isZero(); // no succeeded row left behind, nothing for pruning to do
    assertThat(f.count("kind = 'fails' AND state = 'discarded' AND jsonb_array_length(errors) = 1"
        + " AND errors -> 0 ->> 'message' LIKE 'no %'")).isEqualTo(5);
  }

  @Test
  void retentionZero_inTransaction_commitsTheWriteAndDeletesTheJobTogether() throws Exception {
    String table = "tp_counter_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE " + table + " (key int PRIMARY KEY, n int NOT NULL DEFAULT 0)");
      s.execute("INSERT INTO " + table + " (key) SELECT generate_series(0, 49)");
    }
    try {
      JobQueue jobs = f.jobs("n1");
      JobWorker worker = f.closeLater(jobs.worker(f.queue).concurrency(4).retention(Duration.ZERO)
          .pollInterval(Duration.ofMillis(200))
          .handlerInTransaction("add", Integer.class, (key, job, tx) -> {
            try (PreparedStatement ps = tx.prepareStatement("UPDATE " + table + " SET n = n + 1 WHERE key = ?")) {
              ps.setInt(1, key);
              ps.executeUpdate();
            }
          }).start());
      List<JobRequest> batch = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        batch.add(f.job("add", i));
      }
      jobs.enqueueAll(batch);
      Await.until("every job ended", WAIT, () -> worker.finished() == 50);
      Await.until("every job's row is gone", WAIT, () -> f.count("true") == 0);
      try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT count(*) FILTER (WHERE n = 1), count(*) FROM " + table)) {
        rs.next();
        assertThat(rs.getLong(1)).isEqualTo(50);
        assertThat(rs.getLong(2)).isEqualTo(50);
      }
    } finally {
      try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS " + table);
      }
    }
  }

  /**
   * A queue whose finished jobs pile up faster than a round of pruning a minute deletes (5,000) is
   * pruned again a second later while rounds come back full: 12,000 old jobs are gone within the
   * deadline, where a round a minute (the first one 48 to 72 s after the start, as before) would
   * have deleted 5,000 at most.
   */
  @Test
  void aWorkerBehindOnPruning_catchesUpInSeconds() throws Exception {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("INSERT INTO pglock.job (queue, kind, state, attempt, finished_at)"
            + " SELECT ?, 'ping', 'succeeded', 1, now() - interval '2 days' FROM generate_series(1, 12000)")) {
      ps.setString(1, f.queue);
      ps.executeUpdate();
    }
    JobQueue jobs = f.jobs("n1");
    f.closeLater(jobs.worker(f.queue).retention(Duration.ofDays(1)).handler("ping", Integer.class, (n, job) -> { })
        .start());
    Await.until("the old jobs are pruned", Duration.ofSeconds(45), () -> f.count("true") == 0);
    assertThat(f.count("true")).isZero();
  }

  @Test
  void twoSessions_shareTheHandlerThreads_andBothClaim() throws Exception {
    JobQueue jobs = f.jobs("n-sessions");
    Set<String> workers = ConcurrentHashMap.newKeySet();
    AtomicInteger ran = new AtomicInteger();
    JobWorker worker = jobs.worker(f.queue).concurrency(5).sessions(2).pollInterval(Duration.ofMillis(200))
        .handler("ping", Integer.class, (n, job) -> {
          // pglock-jobs-<queue>-<worker>-handler-<k>: the worker part tells the sessions apart
          String name = Thread.currentThread().getName();
          workers.add(name.substring(0, name.lastIndexOf("-handler-")));
          ran.incrementAndGet();
          Thread.sleep(2); // slow enough that one session alone cannot take every job
        }).start();
    try {
      assertThat(QueueFixture.workerPids("n-sessions")).hasSize(2); // a session of its own each
      List<JobRequest> batch = new ArrayList<>();
      for (int i = 0; i < 400; i++) {
        batch.add(f.job("ping", i));
      }
      jobs.enqueueAll(batch);
      Await.until("every job ran", WAIT, () -> worker.finished() == 400);
      assertThat(ran.get()).isEqualTo(400);
      assertThat(worker.running()).isZero();
      assertThat(workers).hasSize(2);
      assertThat(f.count("state = 'succeeded'")).isEqualTo(400);
    } finally {
      assertThat(worker.close(Duration.ofSeconds(30))).isTrue();
    }
    Await.until("both sessions ended", WAIT, () -> QueueFixture.workerPids("n-sessions").isEmpty());
  }

  @Test
  void sessions_outOfRange_orMoreThanTheThreads_areRefusedClearly() {
    JobQueue jobs = f.jobs("n1");
    assertThatThrownBy(() -> jobs.worker(f.queue).sessions(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("sessions must be between 1 and 16, got 0");
    assertThatThrownBy(() -> jobs.worker(f.queue).sessions(17)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("sessions must be between 1 and 16, got 17");
    assertThatThrownBy(() -> jobs.worker(f.queue).concurrency(2).sessions(3)
        .handler("ping", Integer.class, (n, job) -> { }).start())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("sessions (3) must not exceed concurrency (2): each session runs at least one handler thread;"
            + " lower sessions or raise concurrency");
  }

  @Test
  void aWorkerConfig_splitsItsConcurrencyOverItsSessions() {
    WorkerConfig c = f.jobs("n1").worker(f.queue).concurrency(7).sessions(3)
        .handler("ping", Integer.class, (n, job) -> { }).config();
    assertThat(List.of(c.session(0).concurrency(), c.session(1).concurrency(), c.session(2).concurrency()))
        .containsExactly(3, 2, 2);
    assertThat(c.session(0).sessions()).isEqualTo(1);
  }
}
