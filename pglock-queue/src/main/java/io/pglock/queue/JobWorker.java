package io.pglock.queue;

import java.time.Duration;

/**
 * A pool of handler threads working one queue; see {@link JobQueue#worker(String)}. Thread-safe.
 */
public interface JobWorker extends AutoCloseable {

  /** {@return the queue it works} */
  String queue();

  /**
   * {@return how many jobs it holds now: running in its handlers, or claimed ahead and waiting for a
   * handler thread (a worker whose jobs are quick holds 4 to 128 times its concurrency, 1,024 at most)}
   */
  int running();

  /** {@return how many attempts it has finished (any outcome) since it started} */
  long finished();

  /**
   * Stops claiming, lets running jobs finish for up to the shutdown timeout
   * ({@link JobWorkerBuilder#shutdownTimeout}), records their outcomes, then gives the jobs still
   * running back (available again at once, their handlers interrupted) and releases its connection.
   * Idempotent.
   */
  @Override
  void close();

  /**
   * {@link #close()} with another deadline for running jobs.
   *
   * @return true if every running job finished before the deadline
   * @param timeout how long running jobs may go on finishing
   */
  boolean close(Duration timeout);
}
