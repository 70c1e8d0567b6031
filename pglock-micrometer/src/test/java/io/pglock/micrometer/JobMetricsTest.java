package io.pglock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pglock.PgLocks;
import io.pglock.queue.Backoff;
import io.pglock.queue.JobAdmin;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobRequest;
import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The queue's meters against the real database: attempts by result, and the gauges of the job table. */
@ExtendWith(NoLeakedLocks.class)
class JobMetricsTest extends MetricsTestSupport {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private final String queue = "metrics-" + UUID.randomUUID().toString().substring(0, 8);
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @AfterEach
  void closeAndDelete() throws Exception {
    closeOpen();
    delete(queue, "DELETE FROM pglock.job WHERE queue = ?");
  }

  private JobQueue jobs() {
    PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).namespace("metrics-jobs")
        .nodeName("metrics-jobs").build();
    open.add(locks);
    JobQueue jobs = JobQueue.builder(locks).build();
    open.add(jobs);
    return jobs;
  }

  private Timer attempts(String kind, String result) {
    return registry.find(JobMetrics.ATTEMPTS).tags("queue", queue, "kind", kind, "result", result).timer();
  }

  @Test
  void attempts_recordSuccess_andARetryThenSuccess() {
    JobQueue jobs = jobs();
    jobs.enqueue(JobRequest.of("ok", null).queue(queue));
    jobs.enqueue(JobRequest.of("flaky", null).queue(queue).maxAttempts(3));
    AtomicInteger flakyRuns = new AtomicInteger();
    open.add(jobs.worker(queue).pollInterval(Duration.ofMillis(100)).shutdownTimeout(Duration.ofSeconds(5))
        .backoff(Backoff.exponential(Duration.ofMillis(10), Duration.ofMillis(10)))
        .listener(new JobMetrics(registry))
        .handler("ok", Object.class, (p, job) -> {})
        .handler("flaky", Object.class, (p, job) -> {
          if (flakyRuns.incrementAndGet() == 1) {
            throw new IllegalStateException("fails once on purpose");
          }
        }).start());
    Await.until("the flaky job's second attempt recorded", WAIT,
        () -> attempts("flaky", "SUCCEEDED") != null && attempts("ok", "SUCCEEDED") != null);
    assertThat(attempts("ok", "SUCCEEDED").count()).isEqualTo(1);
    assertThat(attempts("flaky", "RETRY").count()).isEqualTo(1);
    assertThat(attempts("flaky", "SUCCEEDED").count()).isEqualTo(1);
    assertThat(attempts("ok", "RETRY")).isNull();
    assertThat(registry.find(JobMetrics.ATTEMPTS).tag("result", "DISCARDED").timers()).isEmpty();
  }

  @Test
  void queueGauges_showAnAvailableJob_andItsLag() {
    JobQueue jobs = jobs();
    jobs.enqueue(JobRequest.of("waits", null).queue(queue)); // no worker: it stays available
    QueueGauges gauges = QueueGauges.bind(registry, JobAdmin.of(TestDatabase.get().dataSource(), "pglock"),
        Duration.ofMillis(200), List.of());
    open.add(gauges);
    Await.until("the available job counted, and the queue's lag registered", WAIT, () -> {
      Gauge g = registry.find(QueueGauges.JOBS).tags("queue", queue, "state", "AVAILABLE").gauge();
      // a queue's gauges are registered one after the other: the lag comes after the counts
      return g != null && g.value() == 1 && registry.find(QueueGauges.LAG).tag("queue", queue).gauge() != null;
    });
    assertThat(registry.get(QueueGauges.JOBS).tags("queue", queue, "state", "RUNNING").gauge().value()).isZero();
    Gauge lag = registry.get(QueueGauges.LAG).tag("queue", queue).gauge();
    assertThat(lag.value()).isGreaterThanOrEqualTo(0).isLessThan(WAIT.toSeconds());
    gauges.close();
    assertThat(registry.find(QueueGauges.JOBS).tag("queue", queue).gauges()).isEmpty();
  }
}
