package io.pglock.queue;

import io.pglock.PgLocks;
import java.sql.Connection;
import java.util.List;

/**
 * The job queue of one PostgreSQL schema: enqueue jobs, start workers, look after jobs.
 *
 * <p>Build one per application with {@link #builder(PgLocks)}; it is thread-safe. Enqueues on the
 * queue's own connections commit before they return; enqueues on a {@link Connection} of yours join
 * your transaction, so the job exists only if your transaction commits (and workers hear of it only
 * then). Every call that talks to the database returns within the network timeout
 * ({@link JobQueueBuilder#networkTimeout}) plus the connect timeout of the {@code PgLocks}.
 */
public interface JobQueue extends AutoCloseable {

  /**
   * {@return a builder for the queue on the schema, DataSource and node of the PgLocks}
   *
   * @param locks the PgLocks whose data source, schema, node name and lease the queue uses
   */
  static JobQueueBuilder builder(PgLocks locks) {
    return new JobQueueBuilder(locks);
  }

  /**
   * Enqueues a job and commits it.
   *
   * @throws IllegalArgumentException if the payload cannot be written as JSON
   * @throws JobQueueException if the database refuses or cannot be reached
   * @param request the job to enqueue
   * @return the job's id, and whether it was inserted
   */
  Enqueued enqueue(JobRequest request);

  /**
   * Enqueues a job inside the caller's transaction (or at once if the connection is in autocommit):
   * the job exists only if that transaction commits. The connection is left as it was.
   *
   * @throws IllegalArgumentException if the payload cannot be written as JSON
   * @throws JobQueueException if the database refuses
   * @param connection the caller's connection (in a transaction, or in autocommit)
   * @param request the job to enqueue
   * @return the job's id, and whether it was inserted
   */
  Enqueued enqueue(Connection connection, JobRequest request);

  /**
   * Enqueues many jobs in one statement and commits them; the results are in the order of the
   * requests.
   *
   * @throws IllegalArgumentException if a payload cannot be written as JSON
   * @throws JobQueueException if the database refuses or cannot be reached (nothing is inserted)
   * @param requests the jobs to enqueue
   * @return one result per request, in order
   */
  List<Enqueued> enqueueAll(List<JobRequest> requests);

  /**
   * Enqueues many jobs in one statement inside the caller's transaction; see {@link #enqueue(Connection, JobRequest)}.
   *
   * @param connection the caller's connection (in a transaction, or in autocommit)
   * @param requests the jobs to enqueue
   * @return one result per request, in order
   */
  List<Enqueued> enqueueAll(Connection connection, List<JobRequest> requests);

  /**
   * {@return a builder for a worker pool on a queue}
   *
   * @throws IllegalArgumentException if the queue name is not valid
   * @param queue the queue's name
   */
  default JobWorkerBuilder worker(String queue) {
    return new JobWorkerBuilder(this, JobRequest.checkName("queue", queue));
  }

  /** {@return operations on jobs: look, cancel, retry, discard, delete} */
  JobAdmin admin();

  /**
   * Closes the workers started from this queue (each within its shutdown timeout) and stops the
   * notification listener. Does not close the {@code PgLocks}. Idempotent.
   */
  @Override
  void close();
}
