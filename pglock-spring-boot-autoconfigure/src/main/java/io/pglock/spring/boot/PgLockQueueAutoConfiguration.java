package io.pglock.spring.boot;

import io.pglock.PgLocks;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobQueueBuilder;
import io.pglock.queue.JsonMapper;
import io.pglock.spring.queue.JobHandlerProcessor;
import io.pglock.spring.queue.JobQueueBuilderCustomizer;
import io.pglock.spring.queue.JobWorkerBuilderCustomizer;
import io.pglock.spring.queue.JobWorkersLifecycle;
import io.pglock.spring.queue.SpringJobQueue;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of pglock's {@link JobQueue} when pglock-queue is on the class path (an
 * enqueue joins the caller's Spring transaction), and of workers for
 * {@link io.pglock.spring.queue.PgJobHandler} methods.
 */
@AutoConfiguration(after = PgLockAutoConfiguration.class)
@ConditionalOnClass({JobQueue.class, org.springframework.jdbc.datasource.DataSourceUtils.class})
@ConditionalOnBean(PgLocks.class)
@ConditionalOnProperty(prefix = "pglock.queue", name = "enabled", matchIfMissing = true)
public class PgLockQueueAutoConfiguration {

  /** Creates the auto-configuration (Spring calls it). */
  public PgLockQueueAutoConfiguration() {}

  /**
   * The job queue; an enqueue inside a Spring transaction on the application's DataSource joins it.
   *
   * @param locks the node's instance
   * @param jsonMapper the application's pglock {@link JsonMapper}, if it defines one (default: Jackson)
   * @param customizers applied last
   * @param dataSources the application's DataSource (its primary one), whose transactions an enqueue
   *     joins; pglock's own if the application has none that is unique or primary
   * @return the queue
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public JobQueue pgLockJobQueue(PgLocks locks, ObjectProvider<JsonMapper> jsonMapper,
      ObjectProvider<JobQueueBuilderCustomizer> customizers, ObjectProvider<javax.sql.DataSource> dataSources) {
    JobQueueBuilder b = JobQueue.builder(locks);
    jsonMapper.ifAvailable(b::jsonMapper);
    customizers.orderedStream().forEach(c -> c.customize(b));
    // an application that gives pglock a DataSource of its own still enqueues in the transactions
    // of its primary one (the same database)
    return new SpringJobQueue(b.build(), dataSources.getIfUnique(() -> locks.config().dataSource()));
  }

  /**
   * Jobs carry the enqueuer's trace context, and each attempt runs in a span of its own, when the
   * application has an {@code OpenTelemetry} bean and pglock-micrometer is on the class path.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"io.opentelemetry.api.OpenTelemetry", "io.pglock.micrometer.OpenTelemetryJobTracing"})
  @ConditionalOnProperty(prefix = "pglock.tracing", name = "enabled", matchIfMissing = true)
  static class Tracing {
    @Bean
    JobQueueBuilderCustomizer pgLockJobTracing(ObjectProvider<io.opentelemetry.api.OpenTelemetry> openTelemetry) {
      return b -> openTelemetry.ifAvailable(o -> b.tracing(io.pglock.micrometer.OpenTelemetryJobTracing.create(o)));
    }
  }

  /**
   * Finds {@link io.pglock.spring.queue.PgJobHandler} methods.
   *
   * @return the post-processor
   */
  @Bean
  static JobHandlerProcessor pgJobHandlerProcessor() {
    return new JobHandlerProcessor();
  }

  /**
   * Runs a worker per queue that has annotated handlers.
   *
   * @param jobs the queue
   * @param handlers the annotated handlers
   * @param properties pglock's settings
   * @param customizers applied to each worker after the properties
   * @return the lifecycle
   */
  @Bean
  @ConditionalOnMissingBean
  public JobWorkersLifecycle pgLockJobWorkers(JobQueue jobs, JobHandlerProcessor handlers, PgLockProperties properties,
      ObjectProvider<JobWorkerBuilderCustomizer> customizers) {
    return new JobWorkersLifecycle(jobs, handlers, properties.getQueue(), customizers);
  }
}
