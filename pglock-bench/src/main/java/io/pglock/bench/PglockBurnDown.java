package io.pglock.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.queue.ClaimMode;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobRequest;
import io.pglock.queue.JobWorker;
import io.pglock.queue.JobWorkerBuilder;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;
import javax.sql.DataSource;

/**
 * pglock's job queue in B10 ({@code pglock-queue}), in one of its two claim modes: a
 * {@link JobQueue} on a {@link PgLocks} over a HikariCP pool of the peers' size, one worker
 * ({@code JobQueue.worker(queue)}) with {@code concurrency(workers)} handler threads, the rest at
 * its defaults. The {@code jobs} no-op jobs ({@value #KIND}, payload the job's number) go in with
 * {@code enqueueAll} in batches of {@value #BATCH} before the clock starts; the clock starts with
 * {@code JobWorkerBuilder.start()}, which opens the worker's connection (and, in advisory mode, the
 * queue's LISTEN connection) and claims at once.
 *
 * <p>The two modes: {@link ClaimMode#ADVISORY} (the default: a claim's {@code FOR UPDATE SKIP LOCKED}
 * plus a session advisory lock per running job on the worker's own connection; the outcomes of
 * finished jobs and the next claim go in one round trip) and {@link ClaimMode#LEASE} (for
 * transaction-mode poolers: {@code FOR UPDATE SKIP LOCKED} and a {@code lease_until}; every round trip
 * borrows a pooled connection, outcomes and claim are two statements; LISTEN off, as its default).
 *
 * <p>The job table is pglock's own, {@code pglock.job} ({@code PgLockSchema.migrate(pool, "pglock")}),
 * shared with every other user of the database: each contender works a queue of its own
 * ({@code b10-<pid>-<mode>}), whose rows it deletes at the end. Before the insert it runs
 * {@code VACUUM pglock.job}, so that the table's dead tuples after the burn-down are mostly the
 * burn-down's (and so that the second contender does not pay for the first one's dead rows); the
 * {@code pg_stat_user_tables} figures are still the whole table's, other queues' work included.
 *
 * <p>"Done": every row of its queue finished (none available, retryable or running: the job table's
 * partial indexes answer that at once), then checked: all {@code jobs} rows {@code succeeded}.
 */
final class PglockBurnDown implements BurnDownContender {
  static final String ADVISORY = "pglock advisory";
  static final String LEASE = "pglock SKIP LOCKED/lease";
  /** B10's informational row: the advisory mode keeping succeeded jobs (its default retention, a day). */
  static final String ADVISORY_KEPT = "pglock advisory, succeeded kept 1 day";
  static final String SCHEMA = PgLockSchema.DEFAULT_SCHEMA;
  static final String TABLE = SCHEMA + ".job";
  static final String KIND = "b10-noop";
  static final int BATCH = 1_000;

  private final Db db;
  private final int workers;
  private final ClaimMode mode;
  private final String tag;
  private final String queue;
  private final String name;
  private final QueueInstrumentation instrumentation;
  private final String schema;
  private final String table;
  private final Handler handler;
  /** The worker's retention of succeeded jobs; null: its default (1 day). */
  private Duration retention;
  /** Jobs of an unmeasured burn-down on a queue of its own just before the measured one (0: none). */
  private int warmUpJobs;
  /** The worker's sessions ({@code JobWorkerBuilder.sessions}); 1: its default. */
  private int sessions = 1;
  private int jobs;
  private BurnDownProgress progress;
  private HikariDataSource pool;
  private PgLocks locks;
  private JobQueue queueClient;
  private JobWorker worker;
  private AutoCloseable started;
  private long cpuNanos;

  PglockBurnDown(Db db, int workers, ClaimMode mode) {
    this(db, workers, mode, mode == ClaimMode.ADVISORY ? "advisory" : "lease",
        "b10-" + ProcessHandle.current().pid() + "-" + (mode == ClaimMode.ADVISORY ? "advisory" : "lease"),
        mode == ClaimMode.ADVISORY ? ADVISORY : LEASE, QueueInstrumentation.NONE);
  }

  /**
   * A contender with a name, queue and instrumentation of the caller's (B13).
   *
   * @param tag the suffix of its node and session names
   */
  PglockBurnDown(Db db, int workers, ClaimMode mode, String tag, String queue, String name,
      QueueInstrumentation instrumentation) {
    this(db, workers, mode, tag, queue, name, instrumentation, SCHEMA);
  }

  /**
   * A contender as above on the job table of another schema (B14: a table of a million jobs); the schema
   * is migrated if it is not yet.
   */
  PglockBurnDown(Db db, int workers, ClaimMode mode, String tag, String queue, String name,
      QueueInstrumentation instrumentation, String schema) {
    this(db, workers, mode, tag, queue, name, instrumentation, schema, Handler.NO_OP);
  }

  /**
   * A contender as above whose jobs run {@code handler} instead of the no-op (B16: handlers that write
   * to the database).
   */
  PglockBurnDown(Db db, int workers, ClaimMode mode, String tag, String queue, String name,
      QueueInstrumentation instrumentation, String schema, Handler handler) {
    this.handler = handler;
    this.schema = schema;
    this.table = schema + ".job";
    this.db = db;
    this.workers = workers;
    this.mode = mode;
    this.tag = tag;
    this.queue = queue;
    this.name = name;
    this.instrumentation = instrumentation;
  }

  /**
   * The worker keeps succeeded jobs this long ({@code JobWorkerBuilder.retention}); zero: each job's row
   * is deleted by the statement that records its success, as graphile-worker does with every job.
   *
   * @return this contender
   */
  PglockBurnDown retention(Duration retention) {
    this.retention = retention;
    return this;
  }

  /**
   * Before the measured burn-down (in {@link #prepare}, untimed), the same worker settings burn down
   * {@code jobs} jobs of a queue of their own, so that the measured one runs on compiled code (the
   * JIT's C2 compiler otherwise takes a good part of one CPU during the first seconds).
   *
   * @return this contender
   */
  PglockBurnDown warmUp(int jobs) {
    this.warmUpJobs = jobs;
    return this;
  }

  /**
   * The worker claims on this many sessions ({@code JobWorkerBuilder.sessions}), sharing its handler
   * threads.
   *
   * @return this contender
   */
  PglockBurnDown sessions(int sessions) {
    this.sessions = sessions;
    return this;
  }

  private boolean keepsNone() {
    return retention != null && retention.isZero();
  }

  /**
   * What the jobs ({@value PglockBurnDown#KIND}) carry and run: B10's no-op ({@link #NO_OP}) unless a benchmark says
   * otherwise. Every handler calls {@link BurnDownProgress#handled()} once per attempt.
   */
  interface Handler {
    /** The job's number as its payload; the handler only counts the call. */
    Handler NO_OP = new Handler() {
      @Override
      public JobWorkerBuilder register(JobWorkerBuilder b, BurnDownProgress progress, DataSource pool) {
        return b.handler(KIND, Integer.class, (payload, ctx) -> progress.handled());
      }

      @Override
      public String describe() {
        return "handler(\"" + KIND + "\", Integer.class, no-op)";
      }
    };

    /** Registers the handler of {@value PglockBurnDown#KIND} on {@code b}; {@code pool} is the queue's own pool. */
    JobWorkerBuilder register(JobWorkerBuilder b, BurnDownProgress progress, DataSource pool);

    /** {@return the payload of job number {@code i} (0 to jobs - 1); the number itself by default} */
    default IntUnaryOperator payload() {
      return IntUnaryOperator.identity();
    }

    /** {@return how the handler is registered and what it does, for the settings line} */
    String describe();
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public boolean peer() {
    return false;
  }

  @Override
  public String settings() {
    return Report.fmt("JobQueue.builder(PgLocks on the pool).build(); worker(\"%s\").concurrency(%d)"
        + (sessions > 1 ? ".sessions(" + sessions + ")" : "") + ".claimMode(%s)"
        + " (listen %s, pollInterval 1 s, rescueInterval 250 ms, lease 30 s: defaults); %s; jobs enqueued"
        + " with enqueueAll in batches of %d; HikariCP pool of %d; table %s"
        + " (pglock's, shared with other queues: VACUUM before the insert, the queue's rows deleted after); done = no"
        + " row of the queue available, retryable or running, then all %s", queue, workers, mode,
        mode == ClaimMode.ADVISORY ? "on" : "off", handler.describe(), BATCH, B10BurnDown.poolSize(workers), table,
        keepsNone() ? "deleted (none left)" : "succeeded")
        + (retention == null ? "" : "; retention(" + retention + ")" + (keepsNone()
            ? ": a succeeded job's row is deleted by the statement that records its success" : ""))
        + (warmUpJobs > 0 ? Report.fmt("; warm-up: an unmeasured burn-down of %d jobs (queue %s-warm) in this JVM"
            + " just before the measured one", warmUpJobs, queue) : "")
        + instrumentation.settings();
  }

  @Override
  public void prepare(int jobs) throws Exception {
    this.jobs = jobs;
    progress = new BurnDownProgress(jobs);
    pool = db.hikari(B10BurnDown.SESSION_NAME + "pglock-" + tag, B10BurnDown.poolSize(workers));
    PgLockSchema.migrate(pool, schema);
    deleteRowsAndVacuum();
    locks = pgLocks();
    instrumentation.bind(locks);
    queueClient = instrumentation.queue(JobQueue.builder(locks)).build();
    if (warmUpJobs > 0) {
      warmUp();
      deleteRowsAndVacuum(); // the warm-up's dead rows gone, as before any burn-down
    }
    enqueue(queue, jobs);
  }

  private void enqueue(String into, int n) throws Exception {
    List<JobRequest> batch = new ArrayList<>(BATCH);
    for (int i = 0; i < n; i++) {
      batch.add(JobRequest.of(KIND, handler.payload().applyAsInt(i)).queue(into));
      if (batch.size() == BATCH || i == n - 1) {
        instrumentation.enqueue(() -> queueClient.enqueueAll(batch));
        batch.clear();
      }
    }
  }

  /** The unmeasured burn-down ({@link #warmUp(int)}): its queue's rows deleted afterwards. */
  private void warmUp() throws Exception {
    String warm = queue + "-warm";
    enqueue(warm, warmUpJobs);
    BurnDownProgress p = new BurnDownProgress(warmUpJobs);
    p.start();
    try (JobWorker w = settings(queueClient.worker(warm), p).start()) {
      p.awaitHandled(B10BurnDown.STALL);
    } finally {
      try (Connection c = db.connect(B10BurnDown.sessionPrefix(db) + "pglock-setup");
          PreparedStatement ps = c.prepareStatement("DELETE FROM " + table + " WHERE queue = ?")) {
        ps.setString(1, warm);
        ps.executeUpdate();
      }
    }
  }

  /** The measured worker's settings on {@code b}, its handler counting on {@code p}. */
  private JobWorkerBuilder settings(JobWorkerBuilder b, BurnDownProgress p) {
    b.concurrency(workers).claimMode(mode).sessions(sessions);
    if (retention != null) {
      b.retention(retention);
    }
    return handler.register(b, p, pool);
  }

  /**
   * On the pool (lease mode borrows a connection per round trip), as node
   * {@code bench-<pid>-b10-pglock-<mode>}: its sessions show as {@code pglock:bench-<pid>-b10-...}
   * while pglock uses them, which B10 waits for too.
   */
  private PgLocks pgLocks() {
    return instrumentation.locks(PgLocks.builder(pool).schema(schema)
        .nodeName(db.nodeName(B10BurnDown.SESSION_NAME + "pglock-" + tag)).namespace("b10")).build();
  }

  @Override
  public BurnDown burnDown(Duration stall) throws Exception {
    BurnDownProgress p = progress;
    long cpu0 = ProcessCpu.nanos();
    try (Connection poll = db.connect(B10BurnDown.sessionPrefix(db) + "pglock-poll")) {
      progress.start();
      started = instrumentation.started(pool);
      worker = instrumentation.worker(settings(queueClient.worker(queue), p)).start();
      progress.awaitHandled(stall);
      // one condition per partial index (job_available, job_running): a single one for the three states
      // matches neither, and the server would scan the whole table at every poll
      long done = BurnDownProgress.awaitRecorded(poll, "SELECT NOT EXISTS (SELECT 1 FROM " + table
          + " WHERE queue = '" + queue + "' AND state IN ('available', 'retryable')) AND NOT EXISTS (SELECT 1 FROM "
          + table + " WHERE queue = '" + queue + "' AND state = 'running')", stall);
      checkAllSucceeded(poll);
      return progress.result(done);
    } finally {
      stop();
      cpuNanos = ProcessCpu.nanos() - cpu0;
    }
  }

  /** {@return the jobs handled so far in the current burn-down (B14's windows read it as it runs)} */
  int handled() {
    BurnDownProgress p = progress;
    return p == null ? 0 : p.handledCount();
  }

  /** The JVM's CPU time (all its threads) over the last burn-down, from before the workers start until they stopped. */
  long cpuNanos() {
    return cpuNanos;
  }

  private void checkAllSucceeded(Connection c) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("SELECT state, count(*) FROM " + table
        + " WHERE queue = ? GROUP BY state ORDER BY state")) {
      ps.setString(1, queue);
      StringBuilder states = new StringBuilder();
      long succeeded = 0;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          states.append(states.length() == 0 ? "" : ", ").append(rs.getString(1)).append(' ').append(rs.getLong(2));
          if (rs.getString(1).equals("succeeded")) {
            succeeded = rs.getLong(2);
          }
        }
      }
      if (keepsNone() ? states.length() != 0 || progress.handledCount() < jobs : succeeded != jobs) {
        throw new IllegalStateException("queue " + queue + " finished, but not every job succeeded: " + states);
      }
    }
  }

  @Override
  public List<String> tables() {
    return List.of(table);
  }

  private void deleteRowsAndVacuum() throws Exception {
    try (Connection c = db.connect(B10BurnDown.sessionPrefix(db) + "pglock-setup")) {
      try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + table + " WHERE queue = ?")) {
        ps.setString(1, queue);
        ps.executeUpdate();
      }
      try (Statement s = c.createStatement()) {
        s.execute("VACUUM " + table);
      }
    }
  }

  private void stop() {
    if (worker != null) {
      worker.close();
      worker = null;
    }
    if (started != null) {
      try {
        started.close();
      } catch (Exception e) {
        throw new IllegalStateException("closing " + instrumentation.settings() + ": " + e, e);
      }
      started = null;
    }
    if (queueClient != null) {
      queueClient.close();
      queueClient = null;
    }
    if (locks != null) {
      locks.close();
      locks = null;
    }
    if (pool != null) {
      pool.close();
      pool = null;
    }
  }

  @Override
  public void close() throws Exception {
    stop();
    deleteRowsAndVacuum();
  }
}
