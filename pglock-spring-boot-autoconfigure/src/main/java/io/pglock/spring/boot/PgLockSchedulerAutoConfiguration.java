package io.pglock.spring.boot;

import io.pglock.PgLocks;
import io.pglock.schedule.Scheduler;
import io.pglock.schedule.SchedulerBuilder;
import io.pglock.spring.scheduling.PgScheduledProcessor;
import io.pglock.spring.scheduling.SchedulerBuilderCustomizer;
import io.pglock.spring.scheduling.SchedulerLifecycle;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of pglock's {@link Scheduler} when pglock-scheduler is on the class path, and
 * of {@link io.pglock.spring.scheduling.PgScheduled} methods.
 */
@AutoConfiguration(after = PgLockAutoConfiguration.class)
@ConditionalOnClass(Scheduler.class)
@ConditionalOnBean(PgLocks.class)
@ConditionalOnProperty(prefix = "pglock.scheduler", name = "enabled", matchIfMissing = true)
public class PgLockSchedulerAutoConfiguration {

  /** Creates the auto-configuration (Spring calls it). */
  public PgLockSchedulerAutoConfiguration() {}

  /**
   * The node's scheduler; started by {@link SchedulerLifecycle} once the annotated tasks are registered.
   *
   * @param locks the node's instance
   * @param properties pglock's settings
   * @param customizers applied after the properties
   * @return the scheduler, not started
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public Scheduler pgLockScheduler(PgLocks locks, PgLockProperties properties,
      ObjectProvider<SchedulerBuilderCustomizer> customizers) {
    PgLockProperties.Scheduler p = properties.getScheduler();
    SchedulerBuilder b = Scheduler.builder(locks);
    if (p.getPollInterval() != null) {
      b.pollInterval(p.getPollInterval());
    }
    if (p.getSweepInterval() != null) {
      b.sweepInterval(p.getSweepInterval());
    }
    if (p.getHistoryRetention() != null) {
      b.historyRetention(p.getHistoryRetention());
    }
    if (p.getCloseTimeout() != null) {
      b.closeTimeout(p.getCloseTimeout());
    }
    customizers.orderedStream().forEach(c -> c.customize(b));
    return b.build();
  }

  /**
   * Finds {@link io.pglock.spring.scheduling.PgScheduled} methods.
   *
   * @return the post-processor
   */
  @Bean
  static PgScheduledProcessor pgScheduledProcessor() {
    return new PgScheduledProcessor();
  }

  /**
   * Registers the annotated tasks and starts the scheduler with the context.
   *
   * @param scheduler the node's scheduler
   * @param processor the annotated tasks
   * @return the lifecycle
   */
  @Bean
  @ConditionalOnMissingBean
  public SchedulerLifecycle pgLockSchedulerLifecycle(Scheduler scheduler, PgScheduledProcessor processor) {
    return new SchedulerLifecycle(scheduler, processor);
  }
}
