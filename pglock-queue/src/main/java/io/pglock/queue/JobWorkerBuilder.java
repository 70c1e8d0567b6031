package io.pglock.queue;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/** Builds and starts a {@link JobWorker}; see {@link JobQueue#worker(String)}. */
public final class JobWorkerBuilder {
  private final JobQueue jobs;
  private final String queue;
  private final Map<String, WorkerConfig.Registration<?>> handlers = new LinkedHashMap<>();
  private final Map<String, Integer> maxAttempts = new LinkedHashMap<>();
  private int concurrency = 10;
  private int sessions = 1;
  private int defaultMaxAttempts = 25;
  private Backoff backoff = Backoff.standard();
  private ClaimMode claimMode = ClaimMode.ADVISORY;
  private Duration lease = Duration.ofSeconds(30);
  private Boolean listen;
  private Duration pollInterval = Duration.ofSeconds(1);
  private Duration rescueInterval = Duration.ofMillis(250);
  private int concurrencyPerKey;
  private Duration shutdownTimeout = Duration.ofSeconds(30);
  private Duration retention = Duration.ofDays(1);
  private Duration discardedRetention = Duration.ofDays(7);
  private JobListener listener;

  JobWorkerBuilder(JobQueue jobs, String queue) {
    this.jobs = jobs;
    this.queue = queue;
  }

  /**
   * Registers the handler of a kind; the worker claims only kinds it has a handler for.
   *
   * @throws IllegalArgumentException if the kind is not valid or has a handler already
   * @param <T> the payload's type
   * @param kind the kind's name
   * @param payloadType the payload's class, read from the job's JSON
   * @param handler the code that runs the kind's jobs
   * @return this builder
   */
  public <T> JobWorkerBuilder handler(String kind, Class<T> payloadType, JobHandler<T> handler) {
    JobRequest.checkName("kind", kind);
    if (handlers.containsKey(kind)) {
      throw new IllegalArgumentException("kind \"" + kind + "\" has a handler on this worker already");
    }
    handlers.put(kind, new WorkerConfig.Registration<>(Objects.requireNonNull(payloadType, "payloadType"),
        Objects.requireNonNull(handler, "handler")));
    return this;
  }

  /**
   * Registers the handler of a kind whose work is writes to the queue's database, made exactly once:
   * it runs in a transaction that also records the job's success, committed only while this attempt
   * still owns the job (see {@link TransactionalJobHandler}).
   *
   * @throws IllegalArgumentException if the kind is not valid or has a handler already
   * @param <T> the payload's type
   * @param kind the kind's name
   * @param payloadType the payload's class, read from the job's JSON
   * @param handler the code that runs the kind's jobs in the transaction
   * @return this builder
   */
  public <T> JobWorkerBuilder handlerInTransaction(String kind, Class<T> payloadType,
      TransactionalJobHandler<T> handler) {
    JobRequest.checkName("kind", kind);
    if (handlers.containsKey(kind)) {
      throw new IllegalArgumentException("kind \"" + kind + "\" has a handler on this worker already");
    }
    handlers.put(kind, new WorkerConfig.Registration<>(Objects.requireNonNull(payloadType, "payloadType"), null,
        Objects.requireNonNull(handler, "handler")));
    return this;
  }

  /**
   * How many jobs run at once on this worker: its handler threads (default 10, 1 to 1,000). While
   * its handlers take under 5 ms on average, the worker also claims ahead, holding 4 to 128 times
   * this many (about 20 ms of their work per thread; the rest waiting for a thread; 1,024 jobs per
   * session at most), so that quick jobs are not held up by round trips.
   *
   * @param concurrency the number of handler threads
   * @return this builder
   */
  public JobWorkerBuilder concurrency(int concurrency) {
    if (concurrency < 1 || concurrency > 1000) {
      throw new IllegalArgumentException("concurrency must be between 1 and 1000, got " + concurrency);
    }
    this.concurrency = concurrency;
    return this;
  }

  /**
   * Attempts in all for jobs that set none (default 25); see {@link JobRequest#maxAttempts}.
   *
   * @param maxAttempts attempts in all
   * @return this builder
   */
  public JobWorkerBuilder maxAttempts(int maxAttempts) {
    this.defaultMaxAttempts = checkAttempts(maxAttempts);
    return this;
  }

  /**
   * Attempts in all for jobs of a kind that set none.
   *
   * @param kind the kind's name
   * @param maxAttempts attempts in all
   * @return this builder
   */
  public JobWorkerBuilder maxAttempts(String kind, int maxAttempts) {
    this.maxAttempts.put(JobRequest.checkName("kind", kind), checkAttempts(maxAttempts));
    return this;
  }

  /**
   * The wait before a failed job's next attempt (default {@link Backoff#standard()}: 1 s doubling to 1 h, jittered).
   *
   * @param backoff the backoff
   * @return this builder
   */
  public JobWorkerBuilder backoff(Backoff backoff) {
    this.backoff = Objects.requireNonNull(backoff, "backoff");
    return this;
  }

  /**
   * How jobs are owned (default {@link ClaimMode#ADVISORY}); {@link ClaimMode#LEASE} behind a transaction pooler.
   *
   * @param claimMode the claiming mode
   * @return this builder
   */
  public JobWorkerBuilder claimMode(ClaimMode claimMode) {
    this.claimMode = Objects.requireNonNull(claimMode, "claimMode");
    return this;
  }

  /**
   * The lease of a running job in {@link ClaimMode#LEASE} mode (default 30 s, 3 s to 1 h): a
   * crashed worker's jobs come back this long after its last heartbeat.
   *
   * @param lease the lease
   * @return this builder
   */
  public JobWorkerBuilder lease(Duration lease) {
    this.lease = checkDuration("lease", lease, Duration.ofSeconds(3), Duration.ofHours(1));
    return this;
  }

  /**
   * Whether an enqueue's NOTIFY wakes the worker at once (default: on in advisory mode, off in lease
   * mode, as LISTEN does not work through a transaction pooler).
   *
   * @param listen whether to listen
   * @return this builder
   */
  public JobWorkerBuilder listen(boolean listen) {
    this.listen = listen;
    return this;
  }

  /**
   * How often the worker looks for due jobs when nothing wakes it (default 1 s, 10 ms to 1 h).
   *
   * @param pollInterval the poll interval
   * @return this builder
   */
  public JobWorkerBuilder pollInterval(Duration pollInterval) {
    this.pollInterval = checkDuration("pollInterval", pollInterval, Duration.ofMillis(10), Duration.ofHours(1));
    return this;
  }

  /**
   * How often the worker looks for running jobs whose worker is gone (default 250 ms, 10 ms to 1 h):
   * in advisory mode, the bound on how late a crashed worker's job starts again.
   *
   * @param rescueInterval the rescue interval
   * @return this builder
   */
  public JobWorkerBuilder rescueInterval(Duration rescueInterval) {
    this.rescueInterval = checkDuration("rescueInterval", rescueInterval, Duration.ofMillis(10), Duration.ofHours(1));
    return this;
  }

  /**
   * How many database sessions the worker claims and completes jobs on (default 1, 1 to 16, at most
   * the concurrency). Each session has its own I/O thread and its share of the handler threads (the
   * concurrency split as evenly as it goes), and claims, completes and is rescued as a worker of its
   * own would be: every guarantee holds per session. One session's round trips run one after the
   * other, so its database backend uses at most one CPU of the server; with quick jobs that is the
   * limit of a worker's throughput (B10 in docs/benchmarks.md), and two or more sessions spread the
   * work over as many server CPUs. Each takes a connection for its life (advisory mode) or one per
   * round trip in flight (lease mode). Slow jobs gain nothing from more than one.
   *
   * @param sessions the number of sessions
   * @return this builder
   */
  public JobWorkerBuilder sessions(int sessions) {
    if (sessions < 1 || sessions > 16) {
      throw new IllegalArgumentException("sessions must be between 1 and 16, got " + sessions);
    }
    this.sessions = sessions;
    return this;
  }

  /**
   * At most this many jobs with the same {@linkplain JobRequest#concurrencyKey concurrency key} run at
   * once across every worker of the queue (default 0: no limit; 1 to 100). Every worker of the queue
   * must use the same value. Advisory mode only.
   *
   * @param limit the limit
   * @return this builder
   */
  public JobWorkerBuilder concurrencyPerKey(int limit) {
    if (limit < 0 || limit > 100) {
      throw new IllegalArgumentException("concurrencyPerKey must be between 0 (no limit) and 100, got " + limit);
    }
    this.concurrencyPerKey = limit;
    return this;
  }

  /**
   * How long {@link JobWorker#close()} lets running jobs finish (default 30 s, 0 to 1 h).
   *
   * @param shutdownTimeout the shutdown timeout
   * @return this builder
   */
  public JobWorkerBuilder shutdownTimeout(Duration shutdownTimeout) {
    this.shutdownTimeout = checkDuration("shutdownTimeout", shutdownTimeout, Duration.ZERO, Duration.ofHours(1));
    return this;
  }

  /**
   * How long succeeded and cancelled jobs are kept before pruning (default 1 day, 0 to 10 years).
   *
   * @param retention the retention
   * @return this builder
   */
  public JobWorkerBuilder retention(Duration retention) {
    this.retention = checkDuration("retention", retention, Duration.ZERO, Duration.ofDays(3653));
    return this;
  }

  /**
   * How long discarded jobs are kept before pruning (default 7 days, 0 to 10 years).
   *
   * @param discardedRetention the retention of discarded jobs
   * @return this builder
   */
  public JobWorkerBuilder discardedRetention(Duration discardedRetention) {
    this.discardedRetention = checkDuration("discardedRetention", discardedRetention, Duration.ZERO,
        Duration.ofDays(3653));
    return this;
  }

  /**
   * The listener that hears how attempts end, for metrics (default none). It must be quick and
   * thread-safe; what it throws is caught and logged. See {@link JobListener}, and
   * {@code pglock-micrometer}'s {@code JobMetrics} for Micrometer meters.
   *
   * @param listener the listener
   * @return this builder
   * @throws IllegalStateException if a listener was already set
   */
  public JobWorkerBuilder listener(JobListener listener) {
    if (this.listener != null) {
      throw new IllegalStateException("listener was already set to " + this.listener);
    }
    this.listener = Objects.requireNonNull(listener, "listener");
    return this;
  }

  /** {@return the settings so far} */
  public WorkerConfig config() {
    boolean listening = listen != null ? listen : claimMode == ClaimMode.ADVISORY;
    return new WorkerConfig(queue, concurrency, Map.copyOf(handlers), Map.copyOf(maxAttempts), defaultMaxAttempts,
        backoff, claimMode, lease, listening, pollInterval, rescueInterval, concurrencyPerKey, shutdownTimeout,
        retention, discardedRetention, sessions);
  }

  /**
   * Starts the worker: it opens its connection and begins claiming at once.
   *
   * @throws IllegalStateException if no handler is registered, or the queue is closed
   * @throws IllegalArgumentException if per-key concurrency is asked in lease mode, or more sessions
   *     than handler threads
   * @throws io.pglock.LockSessionException if the worker's connection cannot be opened
   * @return the running worker
   */
  public JobWorker start() {
    if (handlers.isEmpty()) {
      throw new IllegalStateException("worker on queue \"" + queue + "\" has no handler: register one with "
          + "handler(kind, payloadType, handler) before start()");
    }
    if (sessions > concurrency) {
      throw new IllegalArgumentException("sessions (" + sessions + ") must not exceed concurrency (" + concurrency
          + "): each session runs at least one handler thread; lower sessions or raise concurrency");
    }
    if (concurrencyPerKey > 0 && claimMode != ClaimMode.ADVISORY) {
      throw new IllegalArgumentException("concurrencyPerKey needs ClaimMode.ADVISORY (its limit is held by advisory "
          + "locks); remove it or use the advisory mode");
    }
    return ((io.pglock.queue.internal.DefaultJobQueue) jobs).startWorker(config(), listener);
  }

  private static int checkAttempts(int maxAttempts) {
    if (maxAttempts < 1 || maxAttempts > 10_000) {
      throw new IllegalArgumentException("maxAttempts must be between 1 and 10000, got " + maxAttempts);
    }
    return maxAttempts;
  }

  private static Duration checkDuration(String what, Duration value, Duration min, Duration max) {
    if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(what + " must be between " + min + " and " + max + ", got " + value);
    }
    return value;
  }
}
