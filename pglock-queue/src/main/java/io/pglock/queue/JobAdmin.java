package io.pglock.queue;

import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Operations on jobs for operators and tools, on a plain {@code DataSource} (the {@code pglock jobs}
 * command uses it). Every call is one short statement, bounded by a 10-second network timeout.
 */
public interface JobAdmin {

  /**
   * {@return the admin for the job table in a schema}
   *
   * @throws IllegalArgumentException if the schema name is not a valid identifier
   * @param dataSource a data source to the database
   * @param schema the schema that holds the job table ({@code pglock} by default)
   */
  static JobAdmin of(DataSource dataSource, String schema) {
    return io.pglock.queue.internal.DefaultJobAdmin.create(dataSource, schema);
  }

  /**
   * {@return the job with the id, if any}
   *
   * @param id the job's id
   */
  Optional<Job> job(long id);

  /** {@return per queue, how many jobs are in each state and how late the oldest due job is} */
  List<QueueCounts> counts();

  /**
   * {@return jobs in a state, newest first}
   *
   * @param state the state
   * @param queue a queue, or null for all
   * @param limit at most this many (1 to 10,000)
   */
  List<Job> list(JobState state, String queue, int limit);

  /**
   * Cancels a job: an available or retryable job becomes cancelled at once; a running job is asked
   * to stop (its handler is told, {@link JobContext#isCancelled()}), and ends cancelled if it fails
   * after that, succeeded if it completes anyway.
   *
   * @return true if the job was cancelled or asked to stop; false if it is missing or finished
   * @param id the job's id
   */
  boolean cancel(long id);

  /**
   * Makes a discarded or cancelled job available again now, with at least one more attempt.
   *
   * @return true if it was retried; false if it is missing or in another state
   * @throws JobQueueException if an unfinished job holds the same unique key
   * @param id the job's id
   */
  boolean retry(long id);

  /**
   * Discards an available or retryable job (it will not run).
   *
   * @return true if it was discarded; false if it is missing or in another state
   * @param id the job's id
   */
  boolean discard(long id);

  /**
   * Deletes a finished job (succeeded, discarded or cancelled).
   *
   * @return true if it was deleted; false if it is missing or not finished
   * @param id the job's id
   */
  boolean delete(long id);
}
