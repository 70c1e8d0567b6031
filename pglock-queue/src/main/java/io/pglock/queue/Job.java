package io.pglock.queue;

import java.time.Instant;
import java.util.List;

/**
 * A job as the table holds it, for operators ({@link JobAdmin}).
 *
 * @param id the id
 * @param queue the queue
 * @param kind the kind
 * @param payloadJson the payload, as JSON text
 * @param priority higher runs first
 * @param runAt not before this
 * @param state the state
 * @param attempt attempts started so far
 * @param maxAttempts the job's own limit, or null for the worker's setting for the kind
 * @param uniqueKey the unique key, or null
 * @param concurrencyKey the concurrency key, or null
 * @param node the node of the running or last attempt, or null
 * @param cancelRequested true if a cancel was asked while it ran
 * @param errors every failed attempt's error, oldest first
 * @param createdAt when enqueued
 * @param startedAt when the running or last attempt started, or null
 * @param finishedAt when it became succeeded, discarded or cancelled, or null
 */
public record Job(long id, String queue, String kind, String payloadJson, int priority, Instant runAt, JobState state,
    int attempt, Integer maxAttempts, String uniqueKey, String concurrencyKey, String node, boolean cancelRequested,
    List<JobError> errors, Instant createdAt, Instant startedAt, Instant finishedAt) {

  /** {@return the last failed attempt's error, or null if none failed} */
  public JobError lastError() {
    return errors.isEmpty() ? null : errors.get(errors.size() - 1);
  }
}
