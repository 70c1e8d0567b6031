package io.pglock.spring.queue;

import io.pglock.queue.JobQueueBuilder;

/**
 * Adjusts the auto-configured job queue before it is built: options the properties do not cover
 * (a JSON mapper, tracing). The starter's own customizer sets tracing when the application has an
 * OpenTelemetry bean.
 */
@FunctionalInterface
public interface JobQueueBuilderCustomizer {
  /**
   * Adjusts the builder.
   *
   * @param builder the builder; each option may be set once
   */
  void customize(JobQueueBuilder builder);
}
