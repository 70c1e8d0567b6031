package io.pglock.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.pglock.schedule.RunKind;
import io.pglock.schedule.RunState;
import io.pglock.schedule.SchedulerListener;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Micrometer meters for a {@link io.pglock.schedule.Scheduler}: a {@link SchedulerListener} that
 * records how runs end. No Spring needed:
 *
 * <pre>{@code
 * Scheduler scheduler = Scheduler.builder(locks).listener(new SchedulerMetrics(registry)).build();
 * }</pre>
 *
 * <p>Meters (see {@code docs/metrics.md}):
 * <ul>
 *   <li>{@value #RUNS} (timer; tags {@code namespace}, {@code task}, {@code kind}
 *       SCHEDULED|CATCH_UP|MANUAL, {@code outcome} SUCCEEDED|FAILED|INTERRUPTED): every run that
 *       ended on this node and how long its body ran;
 *   <li>{@value #LATENESS} (timer; {@code namespace}, {@code task}): how late each run started after
 *       its slot, by the database's clock (negative values, from clocks that disagree, count as 0).
 * </ul>
 * Runs are rare next to lock acquires, so meters are looked up in the registry per run. Thread-safe.
 */
public final class SchedulerMetrics implements SchedulerListener {
  /** The timer of runs. */
  public static final String RUNS = "pglock.task.runs";
  /** The timer of how late runs start. */
  public static final String LATENESS = "pglock.task.lateness";

  private final MeterRegistry registry;
  private final Tags tags;

  /**
   * Meters on a registry.
   *
   * @param registry where the meters go
   */
  public SchedulerMetrics(MeterRegistry registry) {
    this(registry, Tags.empty());
  }

  /**
   * Meters on a registry, with tags of the caller's on every meter.
   *
   * @param registry where the meters go
   * @param tags added to every meter; low-cardinality values only
   */
  public SchedulerMetrics(MeterRegistry registry, Iterable<Tag> tags) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
  }

  /**
   * Records the run in {@value #RUNS} and its lateness in {@value #LATENESS}.
   *
   * @param namespace the namespace of the scheduler's {@link io.pglock.PgLocks}
   * @param task the task's name
   * @param kind why the run happened
   * @param outcome how it ended
   * @param durationNanos how long its body ran
   * @param latenessNanos how late it started after its slot
   */
  @Override
  public void runEnded(String namespace, String task, RunKind kind, RunState outcome, long durationNanos,
      long latenessNanos) {
    Timer.builder(RUNS).tags(tags).tag("namespace", namespace).tag("task", task).tag("kind", kind.name())
        .tag("outcome", outcome.name()).description("runs of a scheduled task that ended on this node")
        .register(registry).record(durationNanos, TimeUnit.NANOSECONDS);
    Timer.builder(LATENESS).tags(tags).tag("namespace", namespace).tag("task", task)
        .description("how late runs of a scheduled task started after their slot").register(registry)
        .record(Math.max(0, latenessNanos), TimeUnit.NANOSECONDS);
  }

  @Override
  public String toString() {
    return "SchedulerMetrics[" + registry.getClass().getSimpleName() + "]";
  }
}
