package io.pglock.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.pglock.queue.JobListener;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Micrometer meters for {@link io.pglock.queue.JobWorker}s: a {@link JobListener} that records how
 * attempts end. No Spring needed; one instance serves every worker:
 *
 * <pre>{@code
 * JobMetrics metrics = new JobMetrics(registry);
 * jobs.worker("emails").listener(metrics).handler("welcome", Welcome.class, handler).start();
 * }</pre>
 *
 * <p>Meter (see {@code docs/metrics.md}): {@value #ATTEMPTS} (timer; tags {@code queue},
 * {@code kind}, {@code result} SUCCEEDED|RETRY|DISCARDED|CANCELLED|ABANDONED, see
 * {@link JobListener.AttemptResult}): every attempt that ran on this node and how long its handler
 * took. Retries, discards and failures need no counters of their own: they are this timer's count
 * with {@code result=RETRY} or {@code result=DISCARDED} (failures: every result but SUCCEEDED and
 * ABANDONED). The number of jobs waiting, per state, and how late the oldest due job is, are the
 * database's to tell: see {@link QueueGauges}.
 *
 * <p>Tags are low-cardinality only: never a job's id. Thread-safe; allocation-free once a meter exists.
 */
public final class JobMetrics implements JobListener {
  /** The timer of attempts. */
  public static final String ATTEMPTS = "pglock.jobs.attempts";

  private static final AttemptResult[] RESULTS = AttemptResult.values();

  private final MeterRegistry registry;
  private final Tags tags;
  /** Per queue and kind: the timers by result, created on first use. */
  private final ConcurrentMap<String, ConcurrentMap<String, AtomicReferenceArray<Timer>>> timers =
      new ConcurrentHashMap<>();

  /**
   * Meters on a registry.
   *
   * @param registry where the meters go
   */
  public JobMetrics(MeterRegistry registry) {
    this(registry, Tags.empty());
  }

  /**
   * Meters on a registry, with tags of the caller's on every meter.
   *
   * @param registry where the meters go
   * @param tags added to every meter; low-cardinality values only
   */
  public JobMetrics(MeterRegistry registry, Iterable<Tag> tags) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
  }

  /**
   * Records the attempt in {@value #ATTEMPTS}.
   *
   * @param queue the worker's queue
   * @param kind the job's kind
   * @param result what became of the attempt
   * @param durationNanos how long the handler ran
   */
  @Override
  public void attemptEnded(String queue, String kind, AttemptResult result, long durationNanos) {
    AtomicReferenceArray<Timer> byResult = timers.computeIfAbsent(queue, q -> new ConcurrentHashMap<>())
        .computeIfAbsent(kind, k -> new AtomicReferenceArray<>(RESULTS.length));
    Timer timer = byResult.get(result.ordinal());
    if (timer == null) {
      timer = Timer.builder(ATTEMPTS).tags(tags).tag("queue", queue).tag("kind", kind).tag("result", result.name())
          .description("job attempts that ran on this node and how long their handler took").register(registry);
      byResult.set(result.ordinal(), timer);
    }
    timer.record(durationNanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public String toString() {
    return "JobMetrics[" + registry.getClass().getSimpleName() + "]";
  }
}
