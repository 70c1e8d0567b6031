package io.pglock.spring.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.pglock.micrometer.SchedulerMetrics;
import io.pglock.schedule.SchedulerBuilder;
import io.pglock.spring.scheduling.SchedulerBuilderCustomizer;
import org.springframework.beans.factory.ObjectProvider;

/** Binds the scheduler's meters ({@code pglock.task.*}) to the application's registry, if it has one. */
public final class SchedulerMeterBinder implements SchedulerBuilderCustomizer {
  private final ObjectProvider<MeterRegistry> registry;

  /**
   * Creates the binder.
   *
   * @param registry the application's registry, if any
   */
  public SchedulerMeterBinder(ObjectProvider<MeterRegistry> registry) {
    this.registry = registry;
  }

  @Override
  public void customize(SchedulerBuilder builder) {
    registry.ifAvailable(r -> builder.listener(new SchedulerMetrics(r)));
  }
}
