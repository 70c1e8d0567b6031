package io.pglock.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.LockKey;
import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The findings of an independent review of the job queue (F1 to F14; F11, pruning, is
 * {@code internal.JobPruneTest}), each reproduced and guarded: every test states a guarantee of the
 * queue and fails where it does not hold. Each works a random queue of its own, or a schema of its
 * own where it needs a trigger.
 *
 * <p>No sleep is used to wait for something to happen: the tests wait for a condition with a
 * deadline (a row's state, a backend waiting on the test's lock, a worker's counters, a thread's
 * state), and show that something did not happen by an event that could only come after it. The
 * only durations left are the scenario itself, each said where it stands: F1's CPU sample, and
 * F9's idle spell (waited for as the lease it lets run out) and handler's work.
 */
@ExtendWith(NoLeakedLocks.class)
class JobQueueRegressionTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final long KEY_BASE = LockKey.named("pglock-jobs", "pglock").int64();
  private final QueueFixture f = new QueueFixture();

  @AfterEach
  void close() throws Exception {
    f.close();
  }

  // ------------------------------------------------------------------ helpers

  /** The first column of the first row (-1 if none), or the update count; unchecked, for conditions. */
  private static long sql(String query, Object... args) {
    try (Connection c = TestDatabase.get().connect(); PreparedStatement ps = c.prepareStatement(query)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      if (ps.execute()) {
        try (ResultSet rs = ps.getResultSet()) {
          return rs.next() ? rs.getLong(1) : -1;
        }
      }
      return ps.getUpdateCount();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The state of a job of the default schema (null if there is no such row); unchecked. */
  private static String state(long id) {
    return state("pglock", id);
  }

  private static String state(String schema, long id) {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT state FROM " + schema + ".job WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Granted advisory locks on a job key (as pg_locks shows a bigint key), any backend. */
  private static long lockHolders(long key) {
    return sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
        + " AND classid = ((?::bigint >> 32) & 4294967295)::oid AND objid = (?::bigint & 4294967295)::oid"
        + " AND objsubid = 1", key, key);
  }

  private static int pid(Connection c) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** True while some backend waits for a lock that the backend {@code blockerPid} holds. */
  private static boolean blocksSomeone(int blockerPid) {
    return sql("SELECT count(*) FROM pg_stat_activity WHERE ?::int = ANY (pg_blocking_pids(pid))", blockerPid) > 0;
  }

  /** A connection holding FOR SHARE on a job row (in an open transaction): the job's outcome waits for it. */
  private static Connection rowBlocker(long id) throws SQLException {
    Connection blocker = TestDatabase.get().connect();
    blocker.setAutoCommit(false);
    try (PreparedStatement ps = blocker.prepareStatement("SELECT 1 FROM pglock.job WHERE id = ? FOR SHARE")) {
      ps.setLong(1, id);
      ps.execute();
    }
    return blocker;
  }


  private static Thread ioThread(String queue) {
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("pglock-jobs-" + queue + "-") && t.getName().endsWith("-io")) {
        return t;
      }
    }
    throw new AssertionError("no I/O thread for " + queue);
  }

  /**
   * In a handler: works until the worker tells it the job is no longer its own, at most the timeout.
   *
   * @return true if it was told
   */
  private static boolean untilLost(JobContext job, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (job.isOwned() && System.nanoTime() - deadline < 0) {
      LockSupport.parkNanos(Await.POLL.toNanos()); // the interrupt that comes with the news ends it early
      Thread.interrupted(); // isOwned() tells the news; a set flag would make parkNanos return at once
    }
    return !job.isOwned();
  }

  /** In a handler that does not stop when told: waits for the latch, deaf to interrupts, at most the timeout. */
  private static boolean deafAwait(CountDownLatch latch, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        return latch.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        // deaf
      }
    }
  }

  /** A schema of the test's own (the queue's tables), for a trigger the shared tables must not get. */
  private String ownSchema(String tag) {
    String schema = "qrt_" + tag + "_" + f.queue.substring(2).replace('-', '_');
    PgLockSchema.migrate(TestDatabase.get().dataSource(), schema);
    return schema;
  }

  private static void dropSchema(String schema) throws SQLException {
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA " + schema + " CASCADE");
    }
  }

  // ------------------------------------------------------------------ F1

  /**
   * A worker whose every handler thread is busy leaves its I/O thread idle: it waits for an outcome,
   * a timer or a notification, and uses next to no CPU.
   *
   * <p>Found in review (F1): the poll deadline was moved on only when a claim was sent, so while
   * every handler was busy (and while closing) the I/O thread's wait returned at once and it spun on
   * a core until a handler finished.
   */
  @Test
  void aBusyWorker_doesNotSpinItsIoThread() throws Exception {
    JobQueue jobs = f.jobs("n1");
    CountDownLatch release = new CountDownLatch(1);
    JobWorker w = f.closeLater(jobs.worker(f.queue).concurrency(1).pollInterval(Duration.ofMillis(10))
        .shutdownTimeout(Duration.ofSeconds(5))
        .handler("busy", Object.class, (p, job) -> release.await(WAIT.toSeconds(), TimeUnit.SECONDS)).start());
    try {
      jobs.enqueue(f.job("busy", null));
      Await.until("its only handler thread is busy", WAIT, () -> w.running() == 1);
      ThreadMXBean mx = ManagementFactory.getThreadMXBean();
      long tid = ioThread(f.queue).getId();
      long cpu0 = mx.getThreadCpuTime(tid);
      assertThat(cpu0).as("thread CPU time measurable").isNotNegative();
      long wall0 = System.nanoTime();
      // Not a synchronisation: the CPU the I/O thread uses over a sample of wall time is the measure,
      // and the sample's length is the scenario (a second of a busy worker: a hundred poll intervals).
      Thread.sleep(1000);
      long cpu = mx.getThreadCpuTime(tid) - cpu0;
      long wall = System.nanoTime() - wall0;
      assertThat(cpu).as("CPU (ns) of an I/O thread with nothing to do, in %d ms", wall / 1_000_000)
          .isLessThan(wall / 10);
    } finally {
      release.countDown();
    }
  }

  // ------------------------------------------------------------------ F2

  /**
   * A failure whose message holds a NUL character (which PostgreSQL's text cannot store) is recorded
   * like any other: the job becomes retryable, with the message kept (the NUL written as \0).
   *
   * <p>Found in review (F2): the outcome statement failed on the NUL, the I/O thread dropped the
   * whole batch of outcomes it carried, and the job stayed 'running' for ever: its lock held by the
   * live session, and the worker's own rescue skipping its own rows.
   */
  @Test
  void aFailureWhoseMessageHasANul_isRecorded_notLeftRunning() {
    JobQueue jobs = f.jobs("n1");
    AtomicInteger calls = new AtomicInteger();
    JobWorker w = f.closeLater(jobs.worker(f.queue).concurrency(2).pollInterval(Duration.ofMillis(50))
        .shutdownTimeout(Duration.ofSeconds(2)).backoff(a -> Duration.ofHours(1))
        .handler("nul", Object.class, (p, job) -> {
          calls.incrementAndGet();
          throw new IllegalStateException("bad byte \u0000 in input");
        })
        .handler("ok", Object.class, (p, job) -> { }).start());
    long id = jobs.enqueue(f.job("nul", null).maxAttempts(2)).id();
    // a job leaves running() only after its outcome is queued
    Await.until("the failure's outcome is queued", WAIT, () -> calls.get() == 1 && w.running() == 0);
    // The sentinel is claimed in a round trip that carries the failure's outcome or comes after it.
    long sentinel = jobs.enqueue(f.job("ok", null)).id();
    Await.until("the sentinel succeeded", WAIT, () -> "succeeded".equals(state(sentinel)));
    Job job = jobs.admin().job(id).orElseThrow();
    assertThat(job.state()).as("the job whose handler threw, once a later job succeeded")
        .isEqualTo(JobState.RETRYABLE);
    assertThat(job.lastError().message()).isEqualTo("bad byte \\0 in input");
  }

  // ------------------------------------------------------------------ F3

  /**
   * A dead worker's job is found and made available again however many running jobs of live workers
   * the queue holds: the rescue pages through the running rows.
   *
   * <p>Found in review (F3): the advisory rescue read "LIMIT 1000" running rows of other owners, in
   * no order, each time the same ones: with more than 1000 running jobs of live workers on a queue,
   * a dead worker's job outside those 1000 was never found.
   */
  @Test
  void aDeadWorkersJob_isRescued_evenWithMoreThan1000RunningJobs() throws Exception {
    sql("INSERT INTO pglock.job (queue, kind, state, attempt, owner, node, started_at)"
        + " SELECT ?, 'work', 'running', 1, 12345, 'live', now() FROM generate_series(1, 1001)", f.queue);
    // the thousand rows that an unordered "LIMIT 1000" reads, by the same plan: these belong to live workers
    List<Long> first = new ArrayList<>();
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT id, attempt FROM pglock.job"
            + " WHERE queue = ? AND state = 'running' AND owner IS DISTINCT FROM ? LIMIT 1000")) {
      ps.setString(1, f.queue);
      ps.setLong(2, 99);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          first.add(rs.getLong(1));
        }
      }
    }
    long dead = sql("SELECT id FROM pglock.job WHERE queue = ? AND NOT (id = ANY (?::bigint[]))", f.queue,
        first.toArray(new Long[0]));
    try (Connection live = TestDatabase.get().connect()) {
      try (PreparedStatement ps = live.prepareStatement(
          "SELECT count(pg_advisory_lock(?::bigint # id)) FROM unnest(?::bigint[]) AS id")) {
        ps.setLong(1, KEY_BASE);
        ps.setArray(2, live.createArrayOf("int8", first.toArray(new Long[0])));
        ps.execute();
      }
      try {
        JobQueue jobs = f.jobs("rescuer");
        f.closeLater(jobs.worker(f.queue).rescueInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ZERO)
            .handler("other", Object.class, (p, job) -> { }).start());
        Await.until("the dead worker's job " + dead + " rescued", WAIT, () -> !"running".equals(state(dead)));
        assertThat(state(dead)).isEqualTo("available");
        assertThat(sql("SELECT count(*) FROM pglock.job WHERE queue = ? AND state = 'running'", f.queue))
            .as("live workers' jobs left alone").isEqualTo(1000);
      } finally {
        try (Statement s = live.createStatement()) {
          s.execute("SELECT pg_advisory_unlock_all()");
        }
      }
    }
  }

  // ------------------------------------------------------------------ F4

  /**
   * A job found lost is judged by its own max attempts, fixed at its claim, never by the default of
   * a rescuing worker that does not know its kind: a job with attempts left becomes available again.
   *
   * <p>Found in review (F4): a worker without a handler for a kind rescued (and discarded) that
   * kind's jobs by its own default max attempts: a job of a kind allowed 50 attempts was discarded
   * at attempt 3 by a worker of another service whose default was 3.
   */
  @Test
  void aRescueByAWorkerThatDoesNotKnowTheKind_doesNotDiscardAJobWithAttemptsLeft() {
    // a job of kind 'report' (its workers use maxAttempts("report", 50)) in its third attempt on a worker that died
    long id = sql("INSERT INTO pglock.job (queue, kind, state, attempt, owner, node, started_at)"
        + " VALUES (?, 'report', 'running', 3, 4242, 'dead-node', now()) RETURNING id", f.queue);
    JobQueue jobs = f.jobs("mailer");
    f.closeLater(jobs.worker(f.queue).maxAttempts(3).rescueInterval(Duration.ofMillis(50))
        .shutdownTimeout(Duration.ZERO).handler("mail", Object.class, (p, job) -> { }).start());
    Await.until("job " + id + " rescued", WAIT, () -> !"running".equals(state(id)));
    assertThat(state(id)).as("a 'report' job in attempt 3, rescued by a 'mail' worker").isEqualTo("available");
  }

  // ------------------------------------------------------------------ F5

  /**
   * An advisory-mode worker's rescue leaves alone the jobs a lease-mode worker runs (a mixed fleet,
   * as during a rolling change of claim mode): no second attempt starts while the first runs.
   *
   * <p>Found in review (F5): an advisory rescue try-locked a lease-mode worker's job, found its lock
   * free (lease mode holds none) and made it available: it ran a second time while its first attempt
   * ran on a connected worker.
   *
   * <p>The rescue that would take the job is shown to have happened by a sentinel: a row that only a
   * rescue can free (running, its owner gone, no lock held), looked at by the same rescue statement.
   * It runs on the advisory worker only after that statement, and the job would have been freed then.
   */
  @Test
  void anAdvisoryWorker_doesNotRescueAJobALeaseWorkerRuns() {
    JobQueue jobsA = f.jobs("lease-node");
    JobQueue jobsB = f.jobs("advisory-node");
    Map<Integer, Long> starts = new ConcurrentHashMap<>();
    AtomicBoolean overlap = new AtomicBoolean();
    AtomicLong runningNow = new AtomicLong();
    CountDownLatch release = new CountDownLatch(1);
    JobHandler<Object> h = (p, job) -> {
      starts.put(job.attempt(), System.nanoTime());
      if (runningNow.incrementAndGet() > 1) {
        overlap.set(true);
      }
      try {
        if (job.attempt() == 1) {
          release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
      } finally {
        runningNow.decrementAndGet();
      }
    };
    try {
      f.closeLater(jobsA.worker(f.queue).claimMode(ClaimMode.LEASE).lease(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ofSeconds(5)).handler("work", Object.class, h)
          .start());
      long id = jobsA.enqueue(f.job("work", null)).id();
      Await.until("attempt 1 started", WAIT, () -> starts.containsKey(1));
      long sentinel = sql("INSERT INTO pglock.job (queue, kind, state, attempt, max_attempts, owner, node, started_at)"
          + " VALUES (?, 'sentinel', 'running', 1, 5, 777, 'gone', now()) RETURNING id", f.queue);
      AtomicBoolean sentinelRan = new AtomicBoolean();
      f.closeLater(jobsB.worker(f.queue).concurrency(2).rescueInterval(Duration.ofMillis(50))
          .pollInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ofSeconds(5)).handler("work", Object.class, h)
          .handler("sentinel", Object.class, (p, job) -> sentinelRan.set(true)).start());
      Await.until("the sentinel " + sentinel + " rescued and run by the advisory worker", WAIT, sentinelRan::get);
      Job job = jobsA.admin().job(id).orElseThrow();
      assertThat(job.state()).as("job %d, its first attempt still in its handler", id).isEqualTo(JobState.RUNNING);
      assertThat(job.attempt()).isEqualTo(1);
      assertThat(job.errors()).as("never taken for a lost job").isEmpty();
      assertThat(starts.keySet()).containsExactly(1);
      release.countDown();
      Await.until("job " + id + " succeeded", WAIT, () -> "succeeded".equals(state(id)));
      assertThat(overlap.get()).as("two attempts of job %d at once", id).isFalse();
      assertThat(starts.keySet()).containsExactly(1);
    } finally {
      release.countDown();
    }
  }

  // ------------------------------------------------------------------ F6

  /**
   * The attempt number rises with every claim, also after a give-back at the shutdown deadline, so
   * the documented fence (the handler's write checks attempt = its own AND state = 'running') keeps
   * out an earlier attempt whose handler did not stop.
   *
   * <p>Found in review (F6): a give-back wrote attempt - 1, so the next claim got the same number
   * again and a handler that had not stopped passed the fence together with the new attempt.
   */
  @Test
  void theAttemptAfterAGiveBack_hasANewNumber_soTheDocumentedFenceHolds() {
    JobQueue jobsA = f.jobs("a");
    JobQueue jobsB = f.jobs("b");
    List<Integer> attempts = new CopyOnWriteArrayList<>();
    CountDownLatch firstStarted = new CountDownLatch(1);
    CountDownLatch secondStarted = new CountDownLatch(1);
    CountDownLatch firstFenced = new CountDownLatch(1);
    AtomicReference<Boolean> firstPassedFence = new AtomicReference<>();
    JobWorker a = f.closeLater(jobsA.worker(f.queue).shutdownTimeout(Duration.ZERO)
        .handler("work", Object.class, (p, job) -> {
          attempts.add(job.attempt());
          firstStarted.countDown();
          deafAwait(secondStarted, WAIT); // a slow handler, deaf to interrupts, still at work when the next attempt starts
          // its write transaction's fence, as docs/queue.md recommends
          firstPassedFence.set(sql("SELECT count(*) FROM pglock.job WHERE id = ? AND attempt = ? AND state = 'running'",
              job.id(), job.attempt()) == 1);
          firstFenced.countDown();
        }).start());
    long id = jobsA.enqueue(f.job("work", null)).id();
    Await.until("the first attempt started", WAIT, () -> firstStarted.getCount() == 0);
    a.close(Duration.ZERO); // gives the job back at once
    f.closeLater(jobsB.worker(f.queue).pollInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ofSeconds(5))
        .handler("work", Object.class, (p, job) -> {
          attempts.add(job.attempt());
          secondStarted.countDown();
          firstFenced.await(WAIT.toSeconds(), TimeUnit.SECONDS); // running while the first attempt writes
        }).start());
    Await.until("the first attempt checked its fence during the second", WAIT, () -> firstFenced.getCount() == 0);
    assertThat(attempts).hasSize(2);
    assertThat(attempts.get(1)).as("the attempt after a give-back").isGreaterThan(attempts.get(0));
    assertThat(firstPassedFence.get()).as("the given-back attempt passes the fence").isFalse();
    Await.until("job " + id + " succeeded", WAIT, () -> "succeeded".equals(state(id)));
  }

  // ------------------------------------------------------------------ F7

  /**
   * close() starts no job after it was called, not even one that a claim already in flight returns
   * (given back unstarted instead), and close(ZERO) returns once that round trip is over.
   *
   * <p>Found in review (F7): close() waited only for the jobs running when it looked; a claim in
   * flight returned after closing was set and its jobs were started anyway, neither waited for nor
   * given back at the deadline: close(ZERO) blocked for the join bound (lease + network timeout + 1
   * s) and the job was left 'running'.
   */
  @Test
  void closeDuringAClaim_startsNoNewJob_andHonoursItsTimeout() throws Exception {
    PgLocks locks = f.locks("n7-" + f.queue, Duration.ofSeconds(3));
    JobQueue jobs = f.closeLater(JobQueue.builder(locks).build());
    CountDownLatch aRunning = new CountDownLatch(1);
    CountDownLatch aFinish = new CountDownLatch(1);
    AtomicLong bStarted = new AtomicLong();
    JobWorker w = f.closeLater(jobs.worker(f.queue).concurrency(2).pollInterval(Duration.ofMillis(50))
        .shutdownTimeout(Duration.ZERO)
        .handler("a", Object.class, (p, job) -> {
          aRunning.countDown();
          aFinish.await();
        })
        .handler("b", Object.class, (p, job) -> {
          bStarted.set(System.nanoTime());
          untilLost(job, WAIT); // busy for as long as it is allowed to
        }).start());
    long a = jobs.enqueue(f.job("a", null)).id();
    assertThat(aRunning.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    long b;
    AtomicLong closeMillis = new AtomicLong(-1);
    Thread closer = new Thread(() -> {
      long t0 = System.nanoTime();
      w.close(Duration.ZERO);
      closeMillis.set(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
    });
    try (Connection blocker = rowBlocker(a)) {
      int blockerPid = pid(blocker);
      aFinish.countDown(); // a's outcome, with a claim for the free thread, now waits for the blocker
      Await.until("a's outcome waits for the blocker", WAIT, () -> blocksSomeone(blockerPid));
      // due already: the claim's now() is its transaction's start, before this enqueue
      b = jobs.enqueue(f.job("b", null).runAt(Instant.now().minusSeconds(60))).id();
      closer.start();
      // close(ZERO) passes its deadline at once and then waits for the I/O thread (join)
      Await.until("close() was called", WAIT, () -> closer.getState() == Thread.State.TIMED_WAITING);
      blocker.commit(); // the claim now runs, and finds b
    }
    closer.join(WAIT.toMillis());
    assertThat(closer.isAlive()).as("close(ZERO) still running").isFalse();
    assertThat(bStarted.get()).as("a job started after close() was called").isZero();
    assertThat(closeMillis.get()).as("close(ZERO)'s duration, ms").isLessThan(3000);
    assertThat(state(b)).as("job b, claimed while close() was called").isEqualTo("available");
  }

  // ------------------------------------------------------------------ F8

  /**
   * An attempt that succeeds (still owned) while close() gives back the jobs at its deadline keeps
   * its outcome: it ends 'succeeded'.
   *
   * <p>Found in review (F8): the give-back ended by clearing the queued outcomes, so an attempt that
   * finished after the I/O thread's last drain and before the give-back lost its outcome; the worker
   * then released its locks and stopped, leaving the succeeded job 'running' (to be run again by
   * another worker's rescue, or discarded as lost on its last attempt).
   */
  @Test
  void aJobThatSucceedsDuringTheShutdownDeadline_endsSucceeded() throws Exception {
    JobQueue jobs = f.jobs("n8-" + f.queue);
    CountDownLatch bothRunning = new CountDownLatch(2);
    CountDownLatch aFinish = new CountDownLatch(1);
    CountDownLatch cFinish = new CountDownLatch(1);
    AtomicBoolean cSucceededOwned = new AtomicBoolean();
    JobWorker w = f.closeLater(jobs.worker(f.queue).concurrency(2).pollInterval(Duration.ofMillis(50))
        .handler("a", Object.class, (p, job) -> {
          bothRunning.countDown();
          aFinish.await();
        })
        .handler("c", Object.class, (p, job) -> {
          bothRunning.countDown();
          cFinish.await(); // returns normally: a success
          cSucceededOwned.set(job.isOwned());
        }).start());
    long a = jobs.enqueue(f.job("a", null)).id();
    long c = jobs.enqueue(f.job("c", null)).id();
    assertThat(bothRunning.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    Thread closer = new Thread(() -> w.close(Duration.ZERO)); // the deadline passes at once: give back
    try (Connection blocker = rowBlocker(a)) {
      int blockerPid = pid(blocker);
      aFinish.countDown();
      Await.until("the I/O thread's round trip with a's outcome waits for the blocker", WAIT,
          () -> blocksSomeone(blockerPid));
      closer.start();
      Await.until("close() passed its deadline and waits for the I/O thread", WAIT,
          () -> closer.getState() == Thread.State.TIMED_WAITING);
      cFinish.countDown(); // c succeeds, still owned
      // a job leaves running() only after its outcome is queued: c's waits behind the held round trip
      Await.until("c's outcome is queued", WAIT, () -> w.running() == 0);
      assertThat(cSucceededOwned.get()).as("c owned at its end").isTrue();
      blocker.commit();
    }
    closer.join(WAIT.toMillis() * 2);
    assertThat(closer.isAlive()).as("close() still running").isFalse();
    assertThat(state(a)).isEqualTo("succeeded");
    assertThat(state(c)).as("job c, succeeded while owned during the shutdown deadline").isEqualTo("succeeded");
  }

  // ------------------------------------------------------------------ F9

  /**
   * Lease mode: a job claimed after the worker was idle for longer than the lease is owned for its
   * own lease from its claim; its handler is not told it lost the job while its first heartbeat is
   * held up.
   *
   * <p>Found in review (F9): the worker kept one renewal time for all its jobs and never reset it
   * when idle, so a job claimed after an idle spell longer than 0.9 x the lease counted as lost at
   * once: the queue's watch thread (every 50 ms) told its handler before the I/O thread's first
   * heartbeat returned, the outcome was dropped and the job ran again after its lease. (A heartbeat
   * held up for a moment, e.g. by the handler's own FOR SHARE fence on the row, was enough.)
   *
   * <p>Here every heartbeat is held up (a trigger in a schema of the test's own waits for an
   * advisory lock the test holds), so the watch decides alone.
   */
  @Test
  void lease_aJobClaimedAfterAnIdleSpell_isNotToldItWasLost() throws Exception {
    String schema = ownSchema("f9");
    long gate = LockKey.named("queue-regression-gate", schema).int64();
    try (Connection gateHolder = TestDatabase.get().connect()) {
      try (Statement s = gateHolder.createStatement()) {
        s.execute("CREATE FUNCTION " + schema + ".hold_heartbeat() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " PERFORM pg_advisory_lock_shared(" + gate + "); PERFORM pg_advisory_unlock_shared(" + gate + ");"
            + " RETURN NEW; END $$");
        // a heartbeat: an UPDATE of a running row that leaves it running (claims and outcomes change the state)
        s.execute("CREATE TRIGGER hold_heartbeat BEFORE UPDATE ON " + schema + ".job FOR EACH ROW"
            + " WHEN (OLD.state = 'running' AND NEW.state = 'running') EXECUTE FUNCTION " + schema + ".hold_heartbeat()");
      }
      Duration lease = Duration.ofSeconds(3);
      PgLocks locks = f.closeLater(PgLocks.builder(TestDatabase.get().dataSource()).namespace("queue-test")
          .nodeName("n9").schema(schema).build());
      JobQueue jobs = f.closeLater(JobQueue.builder(locks).build());
      AtomicReference<Boolean> toldLost = new AtomicReference<>();
      AtomicReference<Boolean> ownedAtEnd = new AtomicReference<>();
      f.closeLater(jobs.worker("q").claimMode(ClaimMode.LEASE).lease(lease).concurrency(1)
          .pollInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ZERO)
          .handler("quick", Object.class, (p, job) -> { })
          .handler("held", Object.class, (p, job) -> {
            // Not a synchronisation: the handler's work, 0.3 s, is the scenario (a tenth of the lease,
            // six watch periods), ended early only if the worker tells it the job is lost.
            toldLost.set(untilLost(job, Duration.ofMillis(300)));
            ownedAtEnd.set(job.isOwned());
          }).start());
      long quick = jobs.enqueue(JobRequest.of("quick", null).queue("q")).id();
      Await.until("the quick job succeeded", WAIT, () -> "succeeded".equals(state(schema, quick)));
      // Idle for longer than the lease: the elapsed time is the scenario. Waited for as what it causes:
      // the lease taken by the worker's last claim (the quick job's, from its start by the server's clock)
      // has run out.
      Await.until("the lease of the worker's last claim ran out", WAIT, () -> sql("SELECT count(*) FROM "
          + schema + ".job WHERE id = ? AND started_at < now() - ? * interval '1 millisecond'", quick,
          lease.toMillis()) == 1);
      try (Statement s = gateHolder.createStatement()) {
        s.execute("SELECT pg_advisory_lock(" + gate + ")");
      }
      long held;
      try {
        held = jobs.enqueue(JobRequest.of("held", null).queue("q")).id();
        Await.until("the held job's handler ended", WAIT, () -> ownedAtEnd.get() != null);
      } finally {
        try (Statement s = gateHolder.createStatement()) {
          s.execute("SELECT pg_advisory_unlock(" + gate + ")");
        }
      }
      assertThat(toldLost.get()).as("the handler was told it lost the job, 0.3 s into a 3 s lease").isFalse();
      assertThat(ownedAtEnd.get()).as("owned at the end of its 0.3 s").isTrue();
      Await.until("the held job succeeded", WAIT, () -> "succeeded".equals(state(schema, held)));
      assertThat(sql("SELECT attempt FROM " + schema + ".job WHERE id = ?", held)).isEqualTo(1);
    } finally {
      f.close();
      dropSchema(schema);
    }
  }

  // ------------------------------------------------------------------ F10

  /**
   * A claim statement that fails after it took its advisory locks (here a trigger; in production a
   * query cancel, disk full, out of memory, a deadlock) leaves no lock behind on the live session:
   * the job runs once the fault is gone, and its lock goes with its outcome.
   *
   * <p>Found in review (F10): the failed claim rolled its UPDATE back but not the session advisory
   * locks it had taken, which stayed on the live worker's session: other workers could never claim
   * the job; this worker claimed it re-entrantly and its outcome unlocked once, so the lock outlived
   * the job.
   */
  @Test
  void aClaimStatementThatFails_leavesNoAdvisoryLock() throws Exception {
    String schema = ownSchema("f10");
    DataSource ds = TestDatabase.get().dataSource();
    long base = LockKey.named("pglock-jobs", schema).int64();
    try {
      try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
        s.execute("CREATE SEQUENCE " + schema + ".boom_count");
        // nextval is not rolled back with the failed statement: it counts the failed claims
        s.execute("CREATE FUNCTION " + schema + ".boom() RETURNS trigger LANGUAGE plpgsql AS"
            + " $$ BEGIN PERFORM nextval('" + schema + ".boom_count'); RAISE EXCEPTION 'claim failed after its locks';"
            + " END $$");
        s.execute("CREATE TRIGGER boom BEFORE UPDATE ON " + schema + ".job FOR EACH ROW"
            + " WHEN (NEW.state = 'running') EXECUTE FUNCTION " + schema + ".boom()");
      }
      PgLocks locks = f.closeLater(PgLocks.builder(ds).namespace("queue-test").nodeName("n10").schema(schema).build());
      JobQueue jobs = f.closeLater(JobQueue.builder(locks).build());
      AtomicLong runs = new AtomicLong();
      f.closeLater(jobs.worker("q").pollInterval(Duration.ofMillis(100)).shutdownTimeout(Duration.ofSeconds(2))
          .handler("work", Object.class, (p, job) -> runs.incrementAndGet()).start());
      long id = jobs.enqueue(JobRequest.of("work", null).queue("q")).id();
      Await.until("two claims failed", WAIT, () -> sql("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM "
          + schema + ".boom_count") >= 2);
      try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
        s.execute("DROP TRIGGER boom ON " + schema + ".job");
      }
      // the outcome's unlock runs in the statement that marks the job succeeded
      Await.until("the job succeeded", WAIT, () -> "succeeded".equals(state(schema, id)));
      assertThat(runs.get()).isEqualTo(1);
      assertThat(lockHolders(base ^ id)).as("locks on the key of a succeeded job, its worker running").isZero();
    } finally {
      f.close();
      dropSchema(schema);
    }
  }

  // ------------------------------------------------------------------ F12

  /**
   * A failure whose recording fails too (a Backoff that returns null or throws, an exception whose
   * getMessage() throws) still gives the job an outcome: it does not stay 'running', and the worker
   * does not count it against its concurrency for ever.
   *
   * <p>Found in review (F12): the failure's outcome (the Backoff, the message, the stack) was worked
   * out outside any try: when that threw, the handler thread died out of the job with no outcome and
   * the job still in the worker's running jobs, its row 'running' and its lock held by the live
   * session for ever.
   */
  @Test
  void aBackoffThatFails_doesNotLeaveTheJobRunningForEver() {
    JobQueue jobs = f.jobs("n1");
    AtomicReference<Thread> failedOn = new AtomicReference<>();
    JobWorker w = f.closeLater(jobs.worker(f.queue).concurrency(2).pollInterval(Duration.ofMillis(50))
        .shutdownTimeout(Duration.ofSeconds(1)).backoff(attempt -> null)
        .handler("fail", Object.class, (p, job) -> {
          failedOn.set(Thread.currentThread());
          throw new IllegalStateException("fails");
        })
        .handler("ok", Object.class, (p, job) -> { }).start());
    long id = jobs.enqueue(f.job("fail", null).maxAttempts(3)).id();
    // done with the job: its outcome queued (it leaves running() only then), or its thread dead
    Await.until("the failing job's handler thread is done with it", WAIT, () -> failedOn.get() != null
        && (w.running() == 0 || failedOn.get().getState() == Thread.State.TERMINATED));
    // The sentinel is claimed in a round trip that carries the failure's outcome or comes after it.
    long sentinel = jobs.enqueue(f.job("ok", null)).id();
    Await.until("the sentinel succeeded", WAIT, () -> "succeeded".equals(state(sentinel)));
    assertThat(state(id)).as("the job whose failure could not be worked out").isEqualTo("retryable");
    assertThat(w.running()).isZero();
  }

  // ------------------------------------------------------------------ F13

  /**
   * An outcome queued while the worker's session lived (the attempt finished while owned) and written
   * after a reconnect still applies: it is written under the owner the job was claimed under, and the
   * job does not run again.
   *
   * <p>Found in review (F13): such an outcome was written with the new session's owner, so its UPDATE
   * matched nothing and its unlock ran on a session that did not hold the lock; the succeeded job was
   * then found free by the worker's own rescue and ran again (or was discarded as lost on its last
   * attempt).
   */
  @Test
  void anOutcomeQueuedBeforeAReconnect_isWritten_notRunAgain() throws Exception {
    String node = "n13-" + f.queue;
    JobQueue jobs = f.jobs(node);
    Map<String, AtomicLong> runs = new ConcurrentHashMap<>();
    CountDownLatch bothRunning = new CountDownLatch(2);
    CountDownLatch aFinish = new CountDownLatch(1);
    CountDownLatch bFinish = new CountDownLatch(1);
    AtomicBoolean aReturnedOwned = new AtomicBoolean();
    JobWorker w = f.closeLater(jobs.worker(f.queue).concurrency(2).pollInterval(Duration.ofMillis(50))
        .rescueInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ofSeconds(1))
        .handler("a", Object.class, (p, job) -> {
          if (runs.computeIfAbsent("a", k -> new AtomicLong()).incrementAndGet() == 1) {
            bothRunning.countDown();
            aFinish.await();
            aReturnedOwned.set(job.isOwned());
          }
        })
        .handler("b", Object.class, (p, job) -> {
          if (runs.computeIfAbsent("b", k -> new AtomicLong()).incrementAndGet() == 1) {
            bothRunning.countDown();
            bFinish.await();
          }
        }).start());
    long a = jobs.enqueue(f.job("a", null)).id();
    long b = jobs.enqueue(f.job("b", null)).id();
    assertThat(bothRunning.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    try (Connection blocker = rowBlocker(b)) {
      int blockerPid = pid(blocker);
      bFinish.countDown();
      Await.until("b's outcome waits for the blocker", WAIT, () -> blocksSomeone(blockerPid));
      aFinish.countDown(); // a succeeds while owned: its outcome is queued behind that round trip
      // a job leaves running() only after its outcome is queued
      Await.until("a's outcome is queued", WAIT, () -> w.running() == 0);
      assertThat(aReturnedOwned.get()).as("a owned at its end").isTrue();
      List<Integer> pids = QueueFixture.workerPids(node);
      assertThat(pids).isNotEmpty();
      for (int pid : pids) {
        sql("SELECT pg_terminate_backend(?)::int", pid);
      }
      Await.until("the worker's backends are gone", WAIT, () -> QueueFixture.workerPids(node).stream().noneMatch(pids::contains));
      blocker.commit();
    }
    Await.until("both succeeded", WAIT, () -> f.count("state = 'succeeded'") == 2);
    Job job = jobs.admin().job(a).orElseThrow();
    assertThat(runs.get("a").get()).as("runs of job a").isEqualTo(1);
    assertThat(job.attempt()).isEqualTo(1);
    assertThat(job.errors()).isEmpty();
    assertThat(runs.get("b").get()).as("runs of job b").isEqualTo(1);
  }

  // ------------------------------------------------------------------ F14

  /**
   * A job whose handler was told it lost the job (the lease ran out while a round trip was held up)
   * is free again: the session that held its lock is ended, not revived by the late answer, and the
   * job runs again.
   *
   * <p>Found in review (F14): a round trip held up (a row lock: an operator's open transaction, VACUUM
   * FULL, ...) for longer than 0.9 x the lease but less than the socket timeout made the watch tell
   * every handler it lost its job and drop their outcomes; but the session lived on, the next
   * statement renewed its lease and it kept the locks of the jobs given up: those rows stayed
   * 'running' with a lock held by a live session, skipped by the worker's own rescue, lost until the
   * worker restarted.
   */
  @Test
  void aJobWhoseHandlerWasToldItLostIt_isFreeAgain() throws Exception {
    PgLocks locks = f.locks("n14-" + f.queue, Duration.ofSeconds(3));
    JobQueue jobs = f.closeLater(JobQueue.builder(locks).build());
    CountDownLatch bothRunning = new CountDownLatch(2);
    CountDownLatch aFinish = new CountDownLatch(1);
    AtomicBoolean pTold = new AtomicBoolean();
    f.closeLater(jobs.worker(f.queue).concurrency(2).pollInterval(Duration.ofMillis(50))
        .rescueInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ofSeconds(1))
        .handler("a", Object.class, (p, job) -> {
          bothRunning.countDown();
          aFinish.await();
        })
        .handler("p", Object.class, (p, job) -> {
          if (job.attempt() == 1) {
            bothRunning.countDown();
            pTold.set(untilLost(job, WAIT));
          }
        }).start());
    long a = jobs.enqueue(f.job("a", null)).id();
    long p = jobs.enqueue(f.job("p", null)).id();
    assertThat(bothRunning.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    try (Connection blocker = rowBlocker(a)) {
      int blockerPid = pid(blocker);
      aFinish.countDown();
      Await.until("a's outcome waits for the blocker", WAIT, () -> blocksSomeone(blockerPid));
      // held past 0.9 x the lease of 3 s (within the socket timeout, lease + 5 s): the watch tells p
      Await.until("p's handler was told it lost the job", WAIT, pTold::get);
      blocker.commit(); // the round trip's late answer
    }
    Await.until("job p, given up by its handler, free and run again", WAIT, () -> "succeeded".equals(state(p)));
    Job job = jobs.admin().job(p).orElseThrow();
    assertThat(job.attempt()).isEqualTo(2);
    assertThat(job.errors()).extracting(JobError::errorClass).containsExactly("io.pglock.queue.WorkerLost");
    Await.until("job a succeeded", WAIT, () -> "succeeded".equals(state(a)));
  }
}
