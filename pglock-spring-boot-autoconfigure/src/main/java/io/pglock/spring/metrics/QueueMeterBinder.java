package io.pglock.spring.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.pglock.micrometer.JobMetrics;
import io.pglock.micrometer.QueueGauges;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobWorkerBuilder;
import io.pglock.spring.queue.JobWorkerBuilderCustomizer;
import java.time.Duration;
import java.util.List;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Binds the queue's meters to the application's registry, if it has one: attempts
 * ({@code pglock.jobs.attempts}) on every worker the starter runs, and, unless turned off, the
 * gauges of jobs per queue and state and of the queue's lag, refreshed from the database in the
 * background ({@code pglock.metrics.queue-gauges-refresh}).
 */
public final class QueueMeterBinder implements JobWorkerBuilderCustomizer, SmartInitializingSingleton, DisposableBean {
  private final ObjectProvider<MeterRegistry> registry;
  private final ObjectProvider<JobQueue> jobs;
  private final Duration refresh;
  private volatile JobMetrics metrics;
  private volatile QueueGauges gauges;

  /**
   * Creates the binder.
   *
   * @param registry the application's registry, if any
   * @param jobs the queue, for the gauges
   * @param refresh how often the gauges are read from the database; null: no gauges
   */
  public QueueMeterBinder(ObjectProvider<MeterRegistry> registry, ObjectProvider<JobQueue> jobs, Duration refresh) {
    this.registry = registry;
    this.jobs = jobs;
    this.refresh = refresh;
  }

  @Override
  public void customize(String queue, JobWorkerBuilder builder) {
    MeterRegistry r = registry.getIfAvailable();
    if (r == null) {
      return;
    }
    JobMetrics m = metrics;
    if (m == null) {
      synchronized (this) {
        if (metrics == null) {
          metrics = new JobMetrics(r);
        }
        m = metrics;
      }
    }
    builder.listener(m);
  }

  @Override
  public void afterSingletonsInstantiated() {
    MeterRegistry r = registry.getIfAvailable();
    JobQueue q = jobs.getIfAvailable();
    if (r != null && q != null && refresh != null) {
      gauges = QueueGauges.bind(r, q.admin(), refresh, List.of());
    }
  }

  @Override
  public void destroy() {
    QueueGauges g = gauges;
    if (g != null) {
      g.close();
    }
  }
}
