package io.pglock.bench;

import io.pglock.PgLocks;
import io.pglock.PgLocksBuilder;
import io.pglock.queue.JobQueueBuilder;
import io.pglock.queue.JobWorkerBuilder;
import javax.sql.DataSource;

/**
 * What B13 adds to a {@link PglockBurnDown}: meters, tracing and gauges, set on the builders the
 * contender uses and bound to what it starts. {@link #NONE} (B10, and B13's plain side) adds nothing.
 */
interface QueueInstrumentation {
  /** Adds nothing: the builders as they are, the enqueue called as it is. */
  QueueInstrumentation NONE = new QueueInstrumentation() {};

  default PgLocksBuilder locks(PgLocksBuilder b) {
    return b;
  }

  /** Called with the {@code PgLocks} built from {@link #locks}, before anything is enqueued. */
  default void bind(PgLocks locks) {}

  default JobQueueBuilder queue(JobQueueBuilder b) {
    return b;
  }

  default JobWorkerBuilder worker(JobWorkerBuilder b) {
    return b;
  }

  /** Runs one enqueue call (B13: inside a span, so that the jobs carry its trace context). */
  default void enqueue(Runnable enqueue) {
    enqueue.run();
  }

  /**
   * Called when the workers start, on the contender's pool; what it returns is closed when they stop
   * (B13: the queue gauges).
   */
  default AutoCloseable started(DataSource pool) {
    return () -> {};
  }

  /** What it adds, for the settings line; empty for none. */
  default String settings() {
    return "";
  }
}
