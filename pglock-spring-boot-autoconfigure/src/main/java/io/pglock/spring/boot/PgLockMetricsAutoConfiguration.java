package io.pglock.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.pglock.PgLocks;
import io.pglock.micrometer.PgLocksMetrics;
import io.pglock.queue.JobQueue;
import io.pglock.schedule.Scheduler;
import io.pglock.spring.metrics.PgLockMeterBinder;
import io.pglock.spring.metrics.QueueMeterBinder;
import io.pglock.spring.metrics.SchedulerMeterBinder;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * pglock's Micrometer meters, when pglock-micrometer and Micrometer are on the class path and the
 * application has a {@link MeterRegistry} (Actuator's, or its own): lock acquisitions, held locks
 * and losses, leadership, task runs, job attempts, and the gauges of queue depth and lag.
 * {@code pglock.metrics.enabled=false} turns them off.
 */
@AutoConfiguration(before = PgLockAutoConfiguration.class)
@ConditionalOnClass({PgLocksMetrics.class, MeterRegistry.class, PgLocks.class})
@ConditionalOnExpression("${pglock.enabled:true} and ${pglock.metrics.enabled:true}")
@EnableConfigurationProperties(PgLockProperties.class)
public class PgLockMetricsAutoConfiguration {

  /** Creates the auto-configuration (Spring calls it). */
  public PgLockMetricsAutoConfiguration() {}

  /**
   * The lock meters.
   *
   * @param registry the application's registry, if any
   * @param locks the node's instance
   * @return the binder
   */
  @Bean
  public PgLockMeterBinder pgLockMeterBinder(ObjectProvider<MeterRegistry> registry, ObjectProvider<PgLocks> locks) {
    return new PgLockMeterBinder(registry, locks);
  }

  /** The scheduler's meters. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(Scheduler.class)
  static class SchedulerMeters {
    @Bean
    SchedulerMeterBinder pgLockSchedulerMeterBinder(ObjectProvider<MeterRegistry> registry) {
      return new SchedulerMeterBinder(registry);
    }
  }

  /** The queue's meters. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(JobQueue.class)
  static class QueueMeters {
    @Bean
    QueueMeterBinder pgLockQueueMeterBinder(ObjectProvider<MeterRegistry> registry, ObjectProvider<JobQueue> jobs,
        PgLockProperties properties) {
      PgLockProperties.Metrics m = properties.getMetrics();
      return new QueueMeterBinder(registry, jobs, m.isQueueGauges() ? m.getQueueGaugesRefresh() : null);
    }
  }
}
