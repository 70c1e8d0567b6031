package io.pglock.spring.queue;

import io.pglock.queue.JobWorkerBuilder;

/**
 * Adjusts each worker the starter runs for {@link PgJobHandler} methods, after the
 * {@code pglock.queue.*} properties and the handlers were applied: options the properties do not
 * cover (a backoff, per-key concurrency, a listener).
 */
@FunctionalInterface
public interface JobWorkerBuilderCustomizer {
  /**
   * Adjusts a worker's builder.
   *
   * @param queue the worker's queue
   * @param builder its builder; each option may still be set once
   */
  void customize(String queue, JobWorkerBuilder builder);
}
