package io.pglock.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.LockKey;
import io.pglock.PgLocks;
import io.pglock.testing.Await;
import io.pglock.testing.TestDatabase;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review findings (branch review-queue): each test states the behaviour the queue promises and fails
 * on main where it does not hold. Only rows of the test's own random queue are touched.
 */
class ReviewFindingsTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final long KEY_BASE = LockKey.named("pglock-jobs", "pglock").int64();
  private final QueueFixture f = new QueueFixture();

  @AfterEach
  void close() throws Exception {
    f.close();
  }

  private static Thread ioThread(String queue) {
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("pglock-jobs-" + queue + "-") && t.getName().endsWith("-io")) {
        return t;
      }
    }
    throw new AssertionError("no I/O thread for " + queue);
  }

  private static long sql(String query, Object... args) throws Exception {
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
    }
  }

  private static String state(long id) throws Exception {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT state FROM pglock.job WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /** Advisory locks on the job key of id held by any backend (the key as pg_locks shows it). */
  private static long jobLockHolders(long id) throws Exception {
    long key = KEY_BASE ^ id;
    return sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
        + " AND classid = ((?::bigint >> 32) & 4294967295)::oid AND objid = (?::bigint & 4294967295)::oid"
        + " AND objsubid = 1", key, key);
  }

  // ------------------------------------------------------------------ F1: the I/O thread spins

  /**
   * While every handler thread is busy (and while closing), nextPoll is never moved on (it is moved
   * only when a claim is sent), so awaitWork's deadline lies in the past and returns at once: the I/O
   * thread spins on a core until a handler finishes.
   */
  @Test
  void f1_aBusyWorker_doesNotSpinItsIoThread() throws Exception {
    JobQueue jobs = f.jobs("n1");
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    f.closeLater(jobs.worker(f.queue).concurrency(1).pollInterval(Duration.ofMillis(10))
        .shutdownTimeout(Duration.ofSeconds(5)).handler("busy", Object.class, (p, job) -> {
          started.countDown();
          release.await(20, TimeUnit.SECONDS);
        }).start());
    jobs.enqueue(f.job("busy", null));
    assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(200); // past the poll interval
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    long tid = ioThread(f.queue).getId();
    long cpu0 = mx.getThreadCpuTime(tid);
    long wall0 = System.nanoTime();
    Thread.sleep(2000);
    long cpu = mx.getThreadCpuTime(tid) - cpu0;
    long wall = System.nanoTime() - wall0;
    release.countDown();
    System.out.printf("F1: I/O thread used %d ms CPU in %d ms while its only handler was busy%n",
        TimeUnit.NANOSECONDS.toMillis(cpu), TimeUnit.NANOSECONDS.toMillis(wall));
    assertThat(cpu).as("CPU of an I/O thread with nothing to do").isLessThan(wall / 10);
  }

  // ------------------------------------------------------------------ F2: an outcome that cannot be written

  /**
   * A handler's exception message with a NUL character: the outcome statement fails (text cannot hold
   * 0x00), the I/O thread drops the whole drained batch, and the job stays 'running' for ever: its lock
   * is held by the live session, and the worker's own rescue skips its own rows.
   */
  @Test
  void f2_aFailureWhoseMessageHasANul_endsRetryableOrDiscarded_notRunningForEver() throws Exception {
    JobQueue jobs = f.jobs("n1");
    f.closeLater(jobs.worker(f.queue).pollInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ofSeconds(2))
        .backoff(a -> Duration.ofMillis(10)).handler("nul", Object.class, (p, job) -> {
          throw new IllegalStateException("bad byte \u0000 in input");
        }).handler("ok", Object.class, (p, job) -> { }).start());
    long id = jobs.enqueue(f.job("nul", null).maxAttempts(2)).id();
    Thread.sleep(3000);
    System.out.printf("F2: job %d is %s after 3 s; job lock holders: %d%n", id, state(id), jobLockHolders(id));
    assertThat(state(id)).as("the job's state 3 s after its handler threw").isIn("retryable", "discarded");
  }

  // ------------------------------------------------------------------ F3: rescue reads only 1000 running rows

  /**
   * The advisory rescue reads "LIMIT 1000" running rows of other owners, in no order, and try-locks
   * them. With more than 1000 running jobs of live workers on a queue, a dead worker's job that is not
   * among those 1000 is never found free.
   */
  @Test
  void f3_aDeadWorkersJob_isRescued_evenWithMoreThan1000RunningJobs() throws Exception {
    sql("INSERT INTO pglock.job (queue, kind, state, attempt, owner, node, started_at)"
        + " SELECT ?, 'work', 'running', 1, 12345, 'live', now() FROM generate_series(1, 1001)", f.queue);
    // exactly the rows the rescue's candidate query reads, by the same plan: these belong to "live" workers
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
        Thread.sleep(3000);
        System.out.printf("F3: the dead worker's job %d is %s after 3 s of rescues%n", dead, state(dead));
        assertThat(state(dead)).as("a job whose lock nobody holds, after 60 rescues").isNotEqualTo("running");
      } finally {
        try (Statement s = live.createStatement()) {
          s.execute("SELECT pg_advisory_unlock_all()");
        }
      }
    }
  }

  // ------------------------------------------------------------------ F4: a rescue discards with the wrong limit

  /**
   * A worker that has no handler for a kind rescues (and discards) that kind's jobs by its own default
   * max attempts, not the owning worker's per-kind setting: a job of a kind allowed 50 attempts is
   * discarded at attempt 3 by a worker of another service whose default is 3.
   */
  @Test
  void f4_aRescueByAWorkerThatDoesNotKnowTheKind_doesNotDiscardAJobWithAttemptsLeft() throws Exception {
    // a job of kind 'report' (its workers use maxAttempts("report", 50)) in its third attempt on a worker that died
    long id = sql("INSERT INTO pglock.job (queue, kind, state, attempt, owner, node, started_at)"
        + " VALUES (?, 'report', 'running', 3, 4242, 'dead-node', now()) RETURNING id", f.queue);
    JobQueue jobs = f.jobs("mailer");
    f.closeLater(jobs.worker(f.queue).maxAttempts(3).rescueInterval(Duration.ofMillis(50))
        .shutdownTimeout(Duration.ZERO).handler("mail", Object.class, (p, job) -> { }).start());
    Await.until("rescued", WAIT, () -> {
      try {
        return !"running".equals(state(id));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    System.out.printf("F4: job %d (kind report, attempt 3 of 50) rescued by a 'mail' worker: %s%n", id, state(id));
    assertThat(state(id)).isEqualTo("available");
  }

  // ------------------------------------------------------------------ F5: advisory rescue takes lease-mode jobs

  /**
   * During a rolling change of claim mode (or any mixed fleet), an advisory worker's rescue try-locks a
   * job that a lease-mode worker runs: nobody holds that lock, so it is "found free" within the rescue
   * interval and runs a second time while the first attempt runs on a connected worker.
   */
  @Test
  void f5_anAdvisoryWorker_doesNotRescueAJobALeaseWorkerRuns() throws Exception {
    JobQueue jobsA = f.jobs("lease-node");
    JobQueue jobsB = f.jobs("advisory-node");
    Map<Integer, Long> starts = new ConcurrentHashMap<>();
    AtomicBoolean overlap = new AtomicBoolean();
    AtomicLong runningNow = new AtomicLong();
    JobHandler<Object> h = (p, job) -> {
      starts.put(job.attempt(), System.nanoTime());
      if (runningNow.incrementAndGet() > 1) {
        overlap.set(true);
      }
      try {
        Thread.sleep(2000);
      } finally {
        runningNow.decrementAndGet();
      }
    };
    f.closeLater(jobsA.worker(f.queue).claimMode(ClaimMode.LEASE).lease(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ofSeconds(5)).handler("work", Object.class, h)
        .start());
    long id = jobsA.enqueue(f.job("work", null)).id();
    Await.until("attempt 1 started", WAIT, () -> starts.containsKey(1));
    f.closeLater(jobsB.worker(f.queue).rescueInterval(Duration.ofMillis(50)).pollInterval(Duration.ofMillis(50))
        .shutdownTimeout(Duration.ofSeconds(5)).handler("work", Object.class, h).start());
    Thread.sleep(1500);
    System.out.printf("F5: attempts started %s, overlap %s%n", starts.keySet(), overlap.get());
    assertThat(overlap.get()).as("two attempts of job %d at once, both workers connected", id).isFalse();
  }

  // ------------------------------------------------------------------ F6: a given-back attempt's number is reused

  /**
   * The documented fencing check (attempt = ? AND state = 'running') relies on the attempt number rising
   * with every claim, but a give-back at the shutdown deadline writes attempt - 1, so the next claim
   * gets the same number: a handler that did not stop passes the fence together with the new attempt.
   */
  @Test
  void f6_theAttemptAfterAGiveBack_hasANewNumber_soTheDocumentedFenceHolds() throws Exception {
    JobQueue jobsA = f.jobs("a");
    JobQueue jobsB = f.jobs("b");
    List<Integer> attempts = new CopyOnWriteArrayList<>();
    CountDownLatch firstStarted = new CountDownLatch(1);
    AtomicBoolean firstStillFenced = new AtomicBoolean();
    AtomicLong secondStarted = new AtomicLong();
    AtomicReference<Long> jobId = new AtomicReference<>();
    JobWorker a = jobsA.worker(f.queue).shutdownTimeout(Duration.ZERO).handler("work", Object.class, (p, job) -> {
      attempts.add(job.attempt());
      firstStarted.countDown();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
      while (System.nanoTime() < until && secondStarted.get() == 0) {
        Thread.onSpinWait(); // a slow handler, deaf to interrupts
      }
      // its write transaction's fence, as docs/queue.md recommends
      firstStillFenced.set(sql("SELECT count(*) FROM pglock.job WHERE id = ? AND attempt = ? AND state = 'running'",
          job.id(), job.attempt()) == 1);
    }).start();
    jobId.set(jobsA.enqueue(f.job("work", null)).id());
    assertThat(firstStarted.await(30, TimeUnit.SECONDS)).isTrue();
    a.close(Duration.ZERO); // gives the job back
    f.closeLater(jobsB.worker(f.queue).pollInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ofSeconds(5))
        .handler("work", Object.class, (p, job) -> {
          attempts.add(job.attempt());
          secondStarted.set(System.nanoTime());
          Thread.sleep(1000);
        }).start());
    Await.until("second attempt", WAIT, () -> attempts.size() == 2);
    Thread.sleep(300);
    System.out.printf("F6: attempt numbers %s; first attempt still passes the fence: %s%n", attempts,
        firstStillFenced.get());
    assertThat(attempts.get(1)).as("the attempt after a give-back").isGreaterThan(attempts.get(0));
  }

  // ------------------------------------------------------------------ F7: close() while a claim is in flight

  /**
   * close() waits only for the jobs running when it looks; a claim already in flight (here held up by a
   * row lock on the outcome it writes) returns after closing was set and its jobs are started anyway.
   * They are not waited for, not given back at the deadline; close(ZERO) blocks for the join bound
   * (lease + network timeout + 1 s), returns true, and the job is left 'running' (found by a rescue
   * later, its attempt counted as lost).
   */
  @Test
  void f7_closeDuringAClaim_startsNoNewJob_andHonoursItsTimeout() throws Exception {
    PgLocks locks = f.locks("n1", Duration.ofSeconds(3));
    JobQueue jobs = f.closeLater(JobQueue.builder(locks).build());
    CountDownLatch aRunning = new CountDownLatch(1);
    CountDownLatch aFinish = new CountDownLatch(1);
    AtomicLong bStarted = new AtomicLong();
    JobWorker w = jobs.worker(f.queue).concurrency(1).pollInterval(Duration.ofMillis(50))
        .shutdownTimeout(Duration.ZERO)
        .handler("a", Object.class, (p, job) -> {
          aRunning.countDown();
          aFinish.await();
        })
        .handler("b", Object.class, (p, job) -> {
          bStarted.set(System.nanoTime());
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
          while (System.nanoTime() < until && job.isOwned()) {
            Thread.onSpinWait();
          }
        }).start();
    long a = jobs.enqueue(f.job("a", null)).id();
    assertThat(aRunning.await(30, TimeUnit.SECONDS)).isTrue();
    long b = jobs.enqueue(f.job("b", null)).id();
    try (Connection blocker = TestDatabase.get().connect()) {
      blocker.setAutoCommit(false);
      try (PreparedStatement ps = blocker.prepareStatement("SELECT 1 FROM pglock.job WHERE id = ? FOR SHARE")) {
        ps.setLong(1, a);
        ps.execute();
      }
      aFinish.countDown(); // its outcome's UPDATE now waits for the blocker, with a claim behind it
      Thread.sleep(300);
      AtomicLong closeMillis = new AtomicLong(-1);
      AtomicBoolean closeResult = new AtomicBoolean();
      long closeCalled = System.nanoTime();
      Thread closer = new Thread(() -> {
        long t0 = System.nanoTime();
        closeResult.set(w.close(Duration.ZERO));
        closeMillis.set(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
      });
      closer.start();
      Thread.sleep(300);
      blocker.commit();
      closer.join(60_000);
      System.out.printf("F7: close(ZERO) took %d ms and returned %s; job b started %s close() was called;"
              + " b is now %s%n", closeMillis.get(), closeResult.get(),
          bStarted.get() == 0 ? "never" : bStarted.get() > closeCalled ? "after" : "before", state(b));
      assertThat(bStarted.get()).as("no job starts after close() was called").isZero();
      assertThat(closeMillis.get()).as("close(ZERO)'s duration, ms").isLessThan(3000);
    }
  }

  // ------------------------------------------------------------------ F8: shutdown drops a success

  /**
   * giveBackRunning() ends with outcomes.clear(): an attempt that finished (owned, outcome queued) after
   * the iteration's drain and before the give-back loses its outcome; the worker then releases every
   * lock and stops, leaving the succeeded job 'running' (another worker's rescue would run it again, or
   * discard it as lost on its last attempt).
   */
  @Test
  void f8_aJobThatSucceedsDuringTheShutdownDeadline_endsSucceeded() throws Exception {
    JobQueue jobs = f.jobs("n1");
    CountDownLatch bothRunning = new CountDownLatch(2);
    CountDownLatch aFinish = new CountDownLatch(1);
    CountDownLatch cFinish = new CountDownLatch(1);
    AtomicBoolean cSucceeded = new AtomicBoolean();
    JobWorker w = jobs.worker(f.queue).concurrency(2).pollInterval(Duration.ofMillis(50))
        .handler("a", Object.class, (p, job) -> {
          bothRunning.countDown();
          aFinish.await();
        })
        .handler("c", Object.class, (p, job) -> {
          bothRunning.countDown();
          cFinish.await(); // returns normally: a success
          cSucceeded.set(job.isOwned());
        }).start();
    long a = jobs.enqueue(f.job("a", null)).id();
    long c = jobs.enqueue(f.job("c", null)).id();
    assertThat(bothRunning.await(30, TimeUnit.SECONDS)).isTrue();
    try (Connection blocker = TestDatabase.get().connect()) {
      blocker.setAutoCommit(false);
      try (PreparedStatement ps = blocker.prepareStatement("SELECT 1 FROM pglock.job WHERE id = ? FOR SHARE")) {
        ps.setLong(1, a);
        ps.execute();
      }
      aFinish.countDown(); // the I/O thread's round trip with a's outcome now waits on the blocker
      Thread.sleep(300);
      Thread closer = new Thread(() -> w.close(Duration.ZERO)); // the deadline passes at once: giveBack
      closer.start();
      Thread.sleep(300);
      cFinish.countDown(); // c succeeds, still owned: its outcome is queued
      Await.until("c's handler returned", WAIT, cSucceeded::get);
      blocker.commit();
      closer.join(60_000);
    }
    Thread.sleep(500);
    System.out.printf("F8: job c's handler succeeded while owned; after close() c is %s (a is %s)%n", state(c),
        state(a));
    assertThat(state(c)).isEqualTo("succeeded");
  }

  // ------------------------------------------------------------------ F9: lease mode, stale renewal after idling

  /**
   * Lease mode: anyOwned is never reset (heartbeat() with no jobs is never called), so after an idle
   * spell longer than 0.9 x lease, renewedAt is stale when the next job is claimed. The queue's watch
   * thread (every 50 ms) then finds ownership invalid before the I/O thread's first heartbeat has
   * returned, and tells the fresh job's handler it lost the job. The documented fence (FOR SHARE on the
   * job row in the handler's transaction) holds that heartbeat up, which makes it certain; without it
   * it is a race of a few ms every 50 ms. The outcome is then dropped and the job runs again after its
   * lease.
   */
  @Test
  void f9_lease_aJobClaimedAfterAnIdleSpell_isNotToldItWasLost() throws Exception {
    JobQueue jobs = f.jobs("n1");
    List<Boolean> ownedAtEnd = new CopyOnWriteArrayList<>();
    try (Connection fence = TestDatabase.get().connect()) { // the handler's connection, open already
      fence.setAutoCommit(false);
      f.closeLater(jobs.worker(f.queue).claimMode(ClaimMode.LEASE).lease(Duration.ofSeconds(3)).concurrency(1)
          .pollInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ZERO)
          .handler("quick", Object.class, (p, job) -> { })
          .handler("fenced", Object.class, (p, job) -> {
            try (PreparedStatement ps = fence.prepareStatement("SELECT 1 FROM pglock.job WHERE id = ? AND attempt = ?"
                + " AND state = 'running' FOR SHARE")) {
              ps.setLong(1, job.id());
              ps.setInt(2, job.attempt());
              ps.execute();
            }
            try {
              Thread.sleep(400); // the handler's own write
            } catch (InterruptedException e) {
              // told it lost the job
            } finally {
              fence.commit();
            }
            ownedAtEnd.add(job.isOwned());
          }).start());
      for (int trial = 1; trial <= 5; trial++) {
        jobs.enqueue(f.job("quick", null));
        int t = trial;
        Await.until("quick succeeded", WAIT, () -> f.count("state = 'succeeded' AND kind = 'quick'") == t);
        Thread.sleep(3200); // idle: longer than 0.9 x the lease
        jobs.enqueue(f.job("fenced", null));
        Await.until("the fenced handler ended", WAIT, () -> ownedAtEnd.size() == t);
        System.out.printf("F9: trial %d, a job claimed after 3.2 s idle: its handler %s owned at its end%n", trial,
            ownedAtEnd.get(t - 1) ? "was" : "was NOT");
        if (!ownedAtEnd.get(t - 1)) {
          break;
        }
      }
    }
    assertThat(ownedAtEnd).as("handlers of freshly claimed jobs (lease 3 s, each ran 0.4 s) owned at their end")
        .containsOnly(true);
  }

  // ------------------------------------------------------------------ F10: a failed claim leaks its locks

  /**
   * Any error in the claim statement after its 'locked' CTE ran (here a trigger; in production a query
   * cancel, disk full, out of memory, a deadlock, or the outcome statement before it in the same
   * implicit transaction) rolls the UPDATE back but not the session advisory locks taken: the job's
   * lock stays on the live worker's session. Other workers can never claim the job; this worker claims
   * it re-entrantly and its outcome unlocks once, so the lock outlives the job.
   */
  @Test
  void f10_aClaimStatementThatFails_leavesNoAdvisoryLock() throws Exception {
    String schema = "review_rq_" + f.queue.substring(2).replace('-', '_');
    javax.sql.DataSource ds = TestDatabase.get().dataSource();
    io.pglock.PgLockSchema.migrate(ds, schema);
    long base = LockKey.named("pglock-jobs", schema).int64();
    try {
      try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
        s.execute("CREATE FUNCTION " + schema + ".boom() RETURNS trigger LANGUAGE plpgsql AS"
            + " $$ BEGIN RAISE EXCEPTION 'claim failed after its locks'; END $$");
        s.execute("CREATE TRIGGER boom BEFORE UPDATE ON " + schema + ".job FOR EACH ROW"
            + " WHEN (NEW.state = 'running') EXECUTE FUNCTION " + schema + ".boom()");
      }
      PgLocks locks = f.closeLater(PgLocks.builder(ds).namespace("queue-test").nodeName("n1").schema(schema).build());
      JobQueue jobs = f.closeLater(JobQueue.builder(locks).build());
      AtomicLong runs = new AtomicLong();
      JobWorker w = f.closeLater(jobs.worker("q").pollInterval(Duration.ofMillis(100))
          .shutdownTimeout(Duration.ofSeconds(2)).handler("work", Object.class, (p, job) -> runs.incrementAndGet())
          .start());
      long id = jobs.enqueue(JobRequest.of("work", null).queue("q")).id();
      Thread.sleep(1000); // a few failed claims
      try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
        s.execute("DROP TRIGGER boom ON " + schema + ".job");
      }
      Await.until("the job ran", WAIT, () -> runs.get() == 1);
      Thread.sleep(1000); // its outcome written and its lock released
      long key = base ^ id;
      long held = sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
          + " AND classid = ((?::bigint >> 32) & 4294967295)::oid AND objid = (?::bigint & 4294967295)::oid"
          + " AND objsubid = 1", key, key);
      String st;
      try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT state FROM " + schema + ".job WHERE id = " + id)) {
        rs.next();
        st = rs.getString(1);
      }
      System.out.printf("F10: job %d is %s, its advisory lock still held by %d backend(s)%n", id, st, held);
      assertThat(held).as("locks on the job key of a %s job, worker still running", st).isZero();
      w.close();
    } finally {
      f.close();
      try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
        s.execute("DROP SCHEMA " + schema + " CASCADE");
      }
    }
  }

  // ------------------------------------------------------------------ F12: a failure in failed() loses the job

  /**
   * execute() computes the failure's outcome (failed(): the Backoff, the message, the stack) outside any
   * try: if that throws (a Backoff that returns null or throws, an exception whose getMessage() throws),
   * the handler thread dies out of execute() with the job still in 'running': no outcome, no
   * running.remove. The row stays 'running' with its lock held by the live session for ever, and the
   * worker counts the job against its concurrency for ever.
   */
  @Test
  void f12_aBackoffThatFails_doesNotLeaveTheJobRunningForEver() throws Exception {
    JobQueue jobs = f.jobs("n1");
    JobWorker w = f.closeLater(jobs.worker(f.queue).concurrency(1).pollInterval(Duration.ofMillis(50))
        .shutdownTimeout(Duration.ofSeconds(1)).backoff(attempt -> null)
        .handler("fail", Object.class, (p, job) -> {
          throw new IllegalStateException("fails");
        }).start());
    long id = jobs.enqueue(f.job("fail", null)).id();
    Thread.sleep(2000);
    System.out.printf("F12: job %d is %s 2 s after its handler threw; worker.running() = %d%n", id, state(id),
        w.running());
    assertThat(state(id)).isNotEqualTo("running");
  }

  // ------------------------------------------------------------------ F13: outcomes queued before a reconnect

  /**
   * An outcome queued while the old session lived (the attempt finished while owned) is written after
   * a reconnect with the new session's owner, so its UPDATE matches nothing (the row's owner is the old
   * one) and its unlock runs on a session that does not hold the lock. The succeeded job is then found
   * free by the worker's own rescue and runs again (and is discarded as "worker lost" if that was its
   * last attempt). The UPDATE's own checks (attempt, state) would have made writing it with the owner
   * it was claimed under safe.
   */
  @Test
  void f13_anOutcomeQueuedBeforeAReconnect_isWritten_notRunAgain() throws Exception {
    String node = "n13-" + f.queue;
    JobQueue jobs = f.jobs(node);
    Map<String, AtomicLong> runs = new ConcurrentHashMap<>();
    CountDownLatch bothRunning = new CountDownLatch(2);
    CountDownLatch aFinish = new CountDownLatch(1);
    CountDownLatch bFinish = new CountDownLatch(1);
    AtomicBoolean aReturned = new AtomicBoolean();
    f.closeLater(jobs.worker(f.queue).concurrency(2).pollInterval(Duration.ofMillis(50))
        .rescueInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ofSeconds(1))
        .handler("a", Object.class, (p, job) -> {
          long n = runs.computeIfAbsent("a", k -> new AtomicLong()).incrementAndGet();
          if (n == 1) {
            bothRunning.countDown();
            aFinish.await();
            aReturned.set(job.isOwned());
          }
        })
        .handler("b", Object.class, (p, job) -> {
          long n = runs.computeIfAbsent("b", k -> new AtomicLong()).incrementAndGet();
          if (n == 1) {
            bothRunning.countDown();
            bFinish.await();
          }
        }).start());
    long a = jobs.enqueue(f.job("a", null)).id();
    long b = jobs.enqueue(f.job("b", null)).id();
    assertThat(bothRunning.await(30, TimeUnit.SECONDS)).isTrue();
    try (Connection blocker = TestDatabase.get().connect()) {
      blocker.setAutoCommit(false);
      try (PreparedStatement ps = blocker.prepareStatement("SELECT 1 FROM pglock.job WHERE id = ? FOR SHARE")) {
        ps.setLong(1, b);
        ps.execute();
      }
      bFinish.countDown(); // b's outcome's round trip waits on the blocker
      Thread.sleep(300);
      aFinish.countDown(); // a succeeds while owned: its outcome is queued behind that round trip
      Await.until("a returned", WAIT, aReturned::get);
      Thread.sleep(100);
      sql("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name LIKE ?",
          "pglock:" + node + ":jobs:%");
      Thread.sleep(200);
      blocker.commit();
    }
    Await.until("both succeeded", WAIT, () -> f.count("state = 'succeeded'") == 2);
    Job job = jobs.admin().job(a).orElseThrow();
    System.out.printf("F13: job a (succeeded while owned, before the reconnect) ran %d time(s), attempt %d,"
        + " errors %s%n", runs.get("a").get(), job.attempt(), job.errors().stream().map(JobError::errorClass).toList());
    assertThat(runs.get("a").get()).as("runs of job a").isEqualTo(1);
  }

  // ------------------------------------------------------------------ F14: a lease declared lost, then revived

  /**
   * A round trip held up (a row lock: an operator's open transaction, VACUUM FULL, ...) for longer than
   * 0.9 x lease but less than the socket timeout (lease + 5 s): the watch tells every handler it lost
   * its job and their outcomes are dropped. But the session was alive all along, and the next statement
   * of the same loop iteration (the rescue) succeeds and renews the LeasedSession's lease, so the session
   * is kept: it still holds the locks of the jobs its handlers gave up. Those rows stay 'running' with a
   * lock held by a live session, skipped by the worker's own rescue: lost until the worker restarts.
   */
  @Test
  void f14_aJobWhoseHandlerWasToldItLostIt_isFreeAgain() throws Exception {
    PgLocks locks = f.locks("n14-" + f.queue, Duration.ofSeconds(3));
    JobQueue jobs = f.closeLater(JobQueue.builder(locks).build());
    CountDownLatch bothRunning = new CountDownLatch(2);
    CountDownLatch aFinish = new CountDownLatch(1);
    AtomicBoolean pTold = new AtomicBoolean();
    JobWorker w = f.closeLater(jobs.worker(f.queue).concurrency(2).pollInterval(Duration.ofMillis(50))
        .rescueInterval(Duration.ofMillis(50)).shutdownTimeout(Duration.ofSeconds(1))
        .handler("a", Object.class, (p, job) -> {
          bothRunning.countDown();
          aFinish.await();
        })
        .handler("p", Object.class, (p, job) -> {
          if (job.attempt() > 1) {
            return;
          }
          bothRunning.countDown();
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
          while (job.isOwned() && System.nanoTime() < until) {
            Thread.onSpinWait();
          }
          pTold.set(!job.isOwned());
        }).start());
    long a = jobs.enqueue(f.job("a", null)).id();
    long p = jobs.enqueue(f.job("p", null)).id();
    assertThat(bothRunning.await(30, TimeUnit.SECONDS)).isTrue();
    try (Connection blocker = TestDatabase.get().connect()) {
      blocker.setAutoCommit(false);
      try (PreparedStatement ps = blocker.prepareStatement("SELECT 1 FROM pglock.job WHERE id = ? FOR SHARE")) {
        ps.setLong(1, a);
        ps.execute();
      }
      aFinish.countDown(); // a's outcome's round trip now waits on the blocker
      Thread.sleep(4500);  // past 0.9 x the lease of 3 s, within the socket timeout of 8 s
      blocker.commit();
    }
    Await.until("p's handler was told", WAIT, pTold::get);
    Thread.sleep(3000); // plenty of rescues (every 50 ms)
    System.out.printf("F14: p's handler was told it lost job %d; 3 s later p is %s, its lock held by %d backend(s),"
        + " worker.running() = %d%n", p, state(p), jobLockHolders(p), w.running());
    assertThat(state(p)).as("a job its worker gave up").isNotEqualTo("running");
  }
}
