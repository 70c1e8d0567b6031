package io.pglock.spring.scheduling;

import io.pglock.schedule.SchedulerBuilder;

/** Adjusts the auto-configured scheduler before it is built, after the {@code pglock.scheduler.*} properties. */
@FunctionalInterface
public interface SchedulerBuilderCustomizer {
  /**
   * Adjusts the builder.
   *
   * @param builder the builder; each option may still be set once
   */
  void customize(SchedulerBuilder builder);
}
