package io.pglock.queue.internal;

import io.pglock.LockKey;
import io.pglock.PgLocks;
import io.pglock.SchemaMissingException;
import io.pglock.internal.util.ChannelListener;
import io.pglock.queue.Enqueued;
import io.pglock.queue.JobAdmin;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobQueueException;
import io.pglock.queue.JobRequest;
import io.pglock.queue.JobTracing;
import io.pglock.queue.JobWorker;
import io.pglock.queue.JsonMapper;
import io.pglock.queue.WorkerConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.zip.CRC32;
import javax.sql.DataSource;

/** The running {@link JobQueue}: enqueues, the shared notification listener, and the workers it started. */
public final class DefaultJobQueue implements JobQueue {
  private final PgLocks locks;
  private final DataSource dataSource;
  private final String schema;
  private final JsonMapper mapper;
  private final Duration networkTimeout;
  private final JobSql sql;
  private final long keyBase;
  private final String channel;
  private final Enqueuer enqueuer;
  private final JobAdmin admin;
  /** The queue's tracing behind a guard; null when none was set. */
  private final GuardedJobTracing tracing;
  private final List<DefaultJobWorker> workers = new CopyOnWriteArrayList<>();
  private ChannelListener listener;
  /**
   * Checks every worker's ownership on a clock of its own: a worker's I/O thread may be stuck in a
   * round trip (a silent network) past its lease, and its handlers must be told before the server
   * frees their locks, not when the round trip times out.
   */
  private final java.util.concurrent.ScheduledExecutorService watch =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "pglock-jobs-watch");
        t.setDaemon(true);
        return t;
      });
  /** Vacuums the job table when autovacuum is off for it; null when the builder said not to. */
  private final JobTableVacuum vacuum;
  private boolean closed;

  private DefaultJobQueue(PgLocks locks, JsonMapper mapper, Duration networkTimeout, JobTracing tracing,
      boolean traceColumn, boolean vacuumWhenAutovacuumOff) {
    this.locks = locks;
    this.dataSource = locks.config().dataSource();
    this.schema = locks.config().schema();
    this.mapper = mapper;
    this.networkTimeout = networkTimeout;
    this.tracing = tracing == null ? null : new GuardedJobTracing(tracing);
    this.sql = new JobSql(schema, traceColumn);
    this.keyBase = keyBase(schema);
    this.channel = channel(schema);
    this.enqueuer = new Enqueuer(sql, channel, mapper);
    this.admin = new DefaultJobAdmin(dataSource, schema, channel, (int) networkTimeout.toMillis());
    this.vacuum = vacuumWhenAutovacuumOff ? new JobTableVacuum(dataSource, schema + ".job",
        (int) networkTimeout.toMillis()) : null;
  }

  /**
   * Builds the queue and checks that the job table exists, and has the column {@code trace_context}
   * if tracing is set.
   *
   * @param tracing the tracing, or null for none
   * @param vacuumWhenAutovacuumOff whether the workers vacuum the job table when autovacuum is off for it
   */
  public static JobQueue start(PgLocks locks, JsonMapper mapper, Duration networkTimeout, JobTracing tracing,
      boolean vacuumWhenAutovacuumOff) {
    String schema = locks.config().schema();
    boolean traceColumn = checkSchema(locks.config().dataSource(), schema, networkTimeout);
    if (tracing != null && !traceColumn) {
      throw new SchemaMissingException("the job table " + schema + ".job has no column trace_context: tracing "
          + "needs pglock's schema at version 11 or later; run PgLockSchema.migrate(dataSource, \"" + schema + "\")");
    }
    return new DefaultJobQueue(locks, mapper, networkTimeout, tracing, traceColumn, vacuumWhenAutovacuumOff);
  }

  /**
   * The base of the job keys of a schema: a job's advisory lock key is {@code base # id} (XOR), so
   * that one statement computes every candidate's key with no function call; the base is the key of
   * the name {@code <schema>} in the namespace {@code pglock-jobs}, so it differs per schema.
   */
  static long keyBase(String schema) {
    return LockKey.named("pglock-jobs", schema).int64();
  }

  /**
   * The base of the per-key concurrency slot keys of a schema: slot i of key K is
   * {@code base # hashtextextended(K, i)}; a base of its own keeps them apart from the job keys.
   */
  static long slotBase(String schema) {
    return LockKey.named("pglock-jobs", schema + ":slots").int64();
  }

  /** The base of the presence keys of a schema: a worker session holds {@code base # owner} for its life. */
  static long presenceBase(String schema) {
    return LockKey.named("pglock-jobs", schema + ":workers").int64();
  }

  /** The NOTIFY channel of a schema's job table: a plain identifier whatever the schema's name. */
  static String channel(String schema) {
    CRC32 crc = new CRC32();
    crc.update(schema.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    return "pglock_jobs_" + Long.toHexString(crc.getValue());
  }

  /** Checks that the job table exists. @return whether it has the column {@code trace_context} (version 11) */
  private static boolean checkSchema(DataSource dataSource, String schema, Duration networkTimeout) {
    boolean present;
    boolean traceColumn;
    try {
      boolean[] found = ShortCall.run(dataSource, (int) networkTimeout.toMillis(), c -> {
        try (PreparedStatement ps = c.prepareStatement("SELECT t IS NOT NULL, EXISTS (SELECT 1 FROM pg_attribute"
            + " WHERE attrelid = t AND attname = 'trace_context' AND NOT attisdropped)"
            + " FROM (SELECT to_regclass(quote_ident(?) || '.job') AS t) x")) {
          ps.setString(1, schema);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return new boolean[] {rs.getBoolean(1), rs.getBoolean(2)};
          }
        }
      });
      present = found[0];
      traceColumn = found[1];
    } catch (SQLException e) {
      throw new JobQueueException("could not reach the database to check the job table: " + e.getMessage(), e);
    }
    if (!present) {
      throw new SchemaMissingException("the job table " + schema + ".job is missing: the queue needs pglock's "
          + "schema at version 9 or later; run PgLockSchema.migrate(dataSource, \"" + schema + "\")");
    }
    return traceColumn;
  }

  @Override
  public Enqueued enqueue(JobRequest request) {
    return enqueueAll(List.of(Objects.requireNonNull(request, "request"))).get(0);
  }

  @Override
  public Enqueued enqueue(Connection connection, JobRequest request) {
    return enqueueAll(connection, List.of(Objects.requireNonNull(request, "request"))).get(0);
  }

  @Override
  public List<Enqueued> enqueueAll(List<JobRequest> requests) {
    checkRequests(requests);
    if (requests.isEmpty()) {
      return List.of();
    }
    try {
      String traceContext = traceContext(); // on the enqueuing thread, whichever thread runs the call
      List<Enqueued> enqueued = ShortCall.run(dataSource, (int) networkTimeout.toMillis(),
          c -> enqueuer.insert(c, requests, traceContext));
      wakeLocal(requests, enqueued);
      return enqueued;
    } catch (SQLException e) {
      throw failure("enqueue " + requests.size() + " job(s)", e);
    }
  }

  /**
   * After an enqueue this queue committed itself: wakes its own workers of the queues that got a job
   * due now, at once. The notification, sent at the same commit, reaches them too, but through the
   * server and the listening connection, about a millisecond later here (B11's wake-up: the
   * notification arrived 1.1 ms after enqueue() returned, p50); the wake it brings is then a claim
   * that finds nothing, or finds jobs another node enqueued. Jobs enqueued on a caller's connection
   * wait for the notification: only the commit, which is the caller's, makes them visible.
   */
  private void wakeLocal(List<JobRequest> requests, List<Enqueued> enqueued) {
    if (workers.isEmpty()) {
      return;
    }
    java.util.Set<String> due = new java.util.HashSet<>();
    for (int i = 0; i < requests.size() && i < enqueued.size(); i++) {
      JobRequest r = requests.get(i);
      // a delay is never negative (JobRequest checks it)
      if (enqueued.get(i).created() && r.runAtValue() == null && (r.delayValue() == null || r.delayValue().isZero())) {
        due.add(r.queueName());
      }
    }
    due.forEach(queue -> dueAt(queue, 0));
  }

  /** Tells the workers of a queue that a job is due at that time (epoch ms; 0: now). */
  private void dueAt(String queue, long epochMillis) {
    for (DefaultJobWorker w : workers) {
      if (w.queue().equals(queue)) {
        w.dueAt(epochMillis);
      }
    }
  }

  @Override
  public List<Enqueued> enqueueAll(Connection connection, List<JobRequest> requests) {
    Objects.requireNonNull(connection, "connection");
    checkRequests(requests);
    if (requests.isEmpty()) {
      return List.of();
    }
    try {
      return enqueuer.insert(connection, requests, traceContext());
    } catch (SQLException e) {
      throw failure("enqueue " + requests.size() + " job(s) on the caller's connection", e);
    }
  }

  /** {@return the trace context of the jobs enqueued now, as JSON text, or null for none} */
  private String traceContext() {
    return tracing == null ? null : tracing.capture();
  }

  private static void checkRequests(List<JobRequest> requests) {
    Objects.requireNonNull(requests, "requests");
    for (JobRequest r : requests) {
      Objects.requireNonNull(r, "a request in the list is null");
    }
  }

  JobQueueException failure(String what, SQLException e) {
    if ("42P01".equals(e.getSQLState()) || "3F000".equals(e.getSQLState())) {
      throw new SchemaMissingException("the job table " + schema + ".job is missing: run PgLockSchema.migrate(dataSource, \""
          + schema + "\")");
    }
    if ("42501".equals(e.getSQLState())) {
      throw new io.pglock.MissingPrivilegeException("could not " + what + ": " + e.getMessage() + "; grant SELECT, "
          + "INSERT, UPDATE, DELETE ON " + schema + ".job and USAGE ON SEQUENCE " + schema + ".job_id_seq to the "
          + "role", e);
    }
    return new JobQueueException("could not " + what + ": " + e.getMessage() + " (SQLSTATE " + e.getSQLState() + ")",
        e);
  }

  @Override
  public JobAdmin admin() {
    return admin;
  }

  /**
   * Starts a worker with the settings (from {@link io.pglock.queue.JobWorkerBuilder#start()}).
   *
   * @param attempts hears how attempts end, or null
   */
  public JobWorker startWorker(WorkerConfig config, io.pglock.queue.JobListener attempts) {
    if (config.sessions() == 1) {
      return startSession(config, attempts);
    }
    List<DefaultJobWorker> started = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < config.sessions(); i++) {
        started.add(startSession(config.session(i), attempts));
      }
    } catch (RuntimeException e) {
      started.forEach(DefaultJobWorker::beginClose);
      started.forEach(DefaultJobWorker::close);
      throw e;
    }
    return new SessionsWorker(config.queue(), started, config.shutdownTimeout());
  }

  private DefaultJobWorker startSession(WorkerConfig config, io.pglock.queue.JobListener attempts) {
    DefaultJobWorker worker;
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("this JobQueue is closed; build a new one");
      }
      worker = new DefaultJobWorker(this, config, GuardedJobListener.of(attempts));
      workers.add(worker);
      if (config.listen() && listener == null) {
        listener = new ChannelListener(dataSource, channel, "pglock-jobs-listen", this::notified, this::wakeAll);
        listener.start();
      }
    }
    ChannelListener l;
    synchronized (this) {
      l = listener;
    }
    if (config.listen() && l != null) {
      l.awaitListening(networkTimeout); // a job enqueued after start() returns wakes the worker
    }
    try {
      worker.start();
    } catch (RuntimeException e) {
      workers.remove(worker);
      throw e;
    }
    return worker;
  }

  /**
   * A notification: {@code "<queue> <due> <sent>"} from an enqueue (epoch ms by the database's clock:
   * the earliest run-at, and when it was sent; 0 0 from a retry: now), or {@code "\u0001cancel <id>"}
   * from a cancel.
   */
  private void notified(String payload) {
    try {
      if (payload.startsWith(DefaultJobAdmin.CANCEL + " ")) {
        long id = Long.parseLong(payload.substring(DefaultJobAdmin.CANCEL.length() + 1));
        for (DefaultJobWorker w : workers) {
          w.cancelRequested(id);
        }
        return;
      }
      int last = payload.lastIndexOf(' ');
      int before = last <= 0 ? -1 : payload.lastIndexOf(' ', last - 1);
      if (before <= 0) {
        return;
      }
      String queue = payload.substring(0, before);
      long due = Long.parseLong(payload.substring(before + 1, last));
      long sent = Long.parseLong(payload.substring(last + 1));
      // how far ahead by the database's clock, so that a skew of this host's clock does not matter
      // (within a millisecond is now: the due time is rounded up, the send time down)
      long local = due - sent <= 1 ? 0 : System.currentTimeMillis() + (due - sent);
      dueAt(queue, local);
    } catch (NumberFormatException e) {
      // not one of ours
    }
  }

  private void wakeAll() {
    for (DefaultJobWorker w : workers) {
      w.dueAt(0);
    }
  }

  void removed(DefaultJobWorker worker) {
    workers.remove(worker);
  }

  PgLocks locks() {
    return locks;
  }

  JobSql sql() {
    return sql;
  }

  long keyBase() {
    return keyBase;
  }

  java.util.concurrent.ScheduledExecutorService watch() {
    return watch;
  }

  /** {@return the queue's tracing behind its guard, or null when none was set} */
  GuardedJobTracing tracing() {
    return tracing;
  }

  JsonMapper mapper() {
    return mapper;
  }

  Duration networkTimeout() {
    return networkTimeout;
  }

  DataSource dataSource() {
    return dataSource;
  }

  /**
   * A worker prunes: its first call starts the job table's vacuum checks (they act only while
   * autovacuum is off for it).
   */
  void vacuumDue() {
    if (vacuum != null) {
      vacuum.due();
    }
  }

  @Override
  public void close() {
    ChannelListener l;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      l = listener;
    }
    for (DefaultJobWorker w : workers) {
      w.beginClose(); // all stop claiming now, so that they finish their jobs in parallel
    }
    for (DefaultJobWorker w : workers) {
      w.close();
    }
    if (l != null) {
      l.close();
    }
    watch.shutdownNow();
    if (vacuum != null) {
      vacuum.close();
    }
  }

  @Override
  public String toString() {
    return "JobQueue[" + schema + ".job, node " + locks.config().nodeName() + ", " + workers.size() + " workers]";
  }
}
