package io.pglock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pglock.PgLocks;
import io.pglock.schedule.Schedule;
import io.pglock.schedule.Scheduler;
import io.pglock.schedule.Task;
import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The scheduler's meters against the real database: a run that succeeds and one that fails. */
@ExtendWith(NoLeakedLocks.class)
class SchedulerMetricsTest extends MetricsTestSupport {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private final String namespace = "metrics-sched-" + UUID.randomUUID().toString().substring(0, 8);
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @AfterEach
  void closeAndDelete() throws Exception {
    closeOpen();
    delete(namespace, "DELETE FROM pglock.task_run WHERE namespace = ?",
        "DELETE FROM pglock.scheduled_task WHERE namespace = ?");
  }

  private Timer runs(String task, String outcome) {
    return registry.find(SchedulerMetrics.RUNS).tags("namespace", namespace, "task", task, "kind", "SCHEDULED",
        "outcome", outcome).timer();
  }

  @Test
  void runs_recordedByOutcome_withTheirLateness() {
    PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).namespace(namespace).nodeName("metrics-sched")
        .build();
    open.add(locks);
    Scheduler scheduler = Scheduler.builder(locks).pollInterval(Duration.ofMillis(100))
        .closeTimeout(Duration.ofSeconds(5)).listener(new SchedulerMetrics(registry)).build();
    open.add(scheduler);
    scheduler.register(Task.builder("works", Schedule.fixedRate(Duration.ofSeconds(1))).build(ctx -> {}));
    scheduler.register(Task.builder("breaks", Schedule.fixedRate(Duration.ofSeconds(1))).build(ctx -> {
      throw new IllegalStateException("broken on purpose");
    }));
    scheduler.start();
    Await.until("a successful and a failed run recorded", WAIT,
        () -> runs("works", "SUCCEEDED") != null && runs("breaks", "FAILED") != null);
    assertThat(runs("works", "FAILED")).isNull();
    assertThat(runs("breaks", "SUCCEEDED")).isNull();
    assertThat(runs("works", "SUCCEEDED").count()).isGreaterThanOrEqualTo(1);
    Timer lateness = registry.find(SchedulerMetrics.LATENESS).tags("namespace", namespace, "task", "works").timer();
    assertThat(lateness).isNotNull();
    assertThat(lateness.count()).isGreaterThanOrEqualTo(1);
    assertThat(lateness.max(java.util.concurrent.TimeUnit.SECONDS)).isLessThan(WAIT.toSeconds());
  }
}
