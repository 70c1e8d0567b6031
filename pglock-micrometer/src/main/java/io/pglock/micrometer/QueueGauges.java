package io.pglock.micrometer;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.pglock.queue.JobAdmin;
import io.pglock.queue.JobState;
import io.pglock.queue.QueueCounts;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gauges of the job table, per queue: how many jobs are in each state and how late the oldest due
 * job is. They come from the database ({@link JobAdmin#counts()}, one statement over the job table),
 * so they are read by a background thread of this class every {@link #DEFAULT_REFRESH refresh
 * interval}, whether anyone scrapes or not, and a scrape reads the last counts: it never queries.
 * Usable without Spring:
 *
 * <pre>{@code
 * QueueGauges gauges = QueueGauges.bind(registry, JobAdmin.of(dataSource, "pglock"));
 * ...
 * gauges.close(); // on shutdown: stops the thread and removes the gauges
 * }</pre>
 *
 * <p>Meters (see {@code docs/metrics.md}):
 * <ul>
 *   <li>{@value #JOBS} (gauge; tags {@code queue}, {@code state} AVAILABLE|RUNNING|SUCCEEDED|RETRYABLE|
 *       DISCARDED|CANCELLED): jobs of the queue in that state at the last refresh;
 *   <li>{@value #LAG} (gauge, seconds; {@code queue}): how long the oldest due job (available or
 *       retryable, its run-at passed) has waited since its run-at, 0 when none is due. A growing
 *       lag means the workers fall behind.
 * </ul>
 * A queue's gauges appear at the first refresh that finds a job in it, and stay (reading 0) once
 * its jobs are gone. Before the first refresh and while the database is away, the gauges read their
 * last value: a failed refresh keeps it, and is logged once (at WARN) until a refresh succeeds again.
 * One instance per job table; run it on one or a few nodes, not every one: each refresh scans the
 * job table. Thread-safe.
 */
public final class QueueGauges implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(QueueGauges.class);
  /** The gauge of jobs per queue and state. */
  public static final String JOBS = "pglock.jobs";
  /** The gauge of the oldest due job's wait, per queue. */
  public static final String LAG = "pglock.jobs.lag";
  /** The refresh interval when none is given: 10 s. */
  public static final Duration DEFAULT_REFRESH = Duration.ofSeconds(10);
  /** The shortest refresh interval accepted. */
  public static final Duration MIN_REFRESH = Duration.ofMillis(100);

  private static final JobState[] STATES = JobState.values();

  private final MeterRegistry registry;
  private final JobAdmin admin;
  private final Tags tags;
  /** The last counts per queue: written by the refresh thread, read by scrapes. */
  private final Map<String, QueueCounts> last = new ConcurrentHashMap<>();
  private final List<Meter> meters = new CopyOnWriteArrayList<>();
  private final ScheduledExecutorService refresher;
  /** Set while refreshes fail, so that a failure is logged once until one succeeds. */
  private final AtomicBoolean failing = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();

  private QueueGauges(MeterRegistry registry, JobAdmin admin, Duration refresh, Tags tags) {
    this.registry = registry;
    this.admin = admin;
    this.tags = tags;
    this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "pglock-queue-gauges");
      t.setDaemon(true);
      return t;
    });
    refresher.scheduleWithFixedDelay(this::refresh, 0, refresh.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * Starts the gauges of a job table, refreshed every {@link #DEFAULT_REFRESH}.
   *
   * @param registry where the gauges go
   * @param admin the job table's admin ({@link JobAdmin#of})
   * @return the running gauges; close them on shutdown
   */
  public static QueueGauges bind(MeterRegistry registry, JobAdmin admin) {
    return bind(registry, admin, DEFAULT_REFRESH, Tags.empty());
  }

  /**
   * Starts the gauges of a job table.
   *
   * @param registry where the gauges go
   * @param admin the job table's admin ({@link JobAdmin#of})
   * @param refresh how often the counts are read from the database: at least {@link #MIN_REFRESH}
   * @param tags added to every gauge; low-cardinality values only
   * @return the running gauges; close them on shutdown
   * @throws IllegalArgumentException if the refresh interval is shorter than {@link #MIN_REFRESH}
   */
  public static QueueGauges bind(MeterRegistry registry, JobAdmin admin, Duration refresh, Iterable<Tag> tags) {
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(admin, "admin");
    Objects.requireNonNull(refresh, "refresh");
    if (refresh.compareTo(MIN_REFRESH) < 0) {
      throw new IllegalArgumentException("refresh must be at least " + MIN_REFRESH + ": " + refresh);
    }
    return new QueueGauges(registry, admin, refresh, Tags.of(Objects.requireNonNull(tags, "tags")));
  }

  /** One refresh, on the refresh thread: never throws (a throw would end the schedule). */
  private void refresh() {
    List<QueueCounts> counts;
    try {
      counts = admin.counts();
    } catch (RuntimeException e) {
      if (failing.compareAndSet(false, true)) {
        log.warn("the queue gauges could not read the job counts ({}); they keep their last values and retry "
            + "quietly until a read succeeds", e.toString());
      }
      return;
    }
    if (failing.compareAndSet(true, false)) {
      log.debug("the queue gauges read the job counts again");
    }
    for (QueueCounts q : counts) {
      if (last.put(q.queue(), q) == null && !closed.get()) {
        register(q.queue());
      }
    }
    for (String queue : last.keySet()) {
      if (counts.stream().noneMatch(q -> q.queue().equals(queue))) {
        last.put(queue, new QueueCounts(queue, Map.of(), null)); // its jobs are gone: 0, not the last figure
      }
    }
  }

  private void register(String queue) {
    for (JobState state : STATES) {
      meters.add(Gauge.builder(JOBS, this, g -> g.count(queue, state)).tags(tags).tag("queue", queue)
          .tag("state", state.name()).description("jobs of the queue in the state, at the last refresh")
          .baseUnit("jobs").strongReference(true).register(registry));
    }
    meters.add(Gauge.builder(LAG, this, g -> g.lagSeconds(queue)).tags(tags).tag("queue", queue)
        .description("how long the oldest due job of the queue has waited since its run-at, at the last refresh")
        .baseUnit("seconds").strongReference(true).register(registry));
  }

  private double count(String queue, JobState state) {
    QueueCounts q = last.get(queue);
    return q == null ? 0 : q.count(state);
  }

  private double lagSeconds(String queue) {
    QueueCounts q = last.get(queue);
    return q == null || q.oldestDueAge() == null ? 0 : q.oldestDueAge().toNanos() / 1e9;
  }

  /** Stops the refresh thread and removes the gauges from the registry. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    refresher.shutdownNow();
    for (Meter m : meters) {
      registry.remove(m);
    }
    meters.clear();
  }

  @Override
  public String toString() {
    return "QueueGauges[" + last.keySet() + (closed.get() ? ", closed" : "") + "]";
  }
}
