package io.pglock.queue.internal;

/**
 * The outcome of one attempt, waiting to be written with the next round trip.
 *
 * @param id the job
 * @param attempt the attempt's number: the write happens only if the row is still at it
 * @param state succeeded, retryable, discarded, cancelled, or released (given back at shutdown)
 * @param delayMillis the wait before the next attempt (retryable only)
 * @param errorClass the failure's class, or null
 * @param errorMessage the failure's message, or null
 * @param errorStack the failure's trimmed stack, or null
 * @param slotKey the per-key concurrency slot lock to release with it, or null
 * @param owner the owner (session) the attempt was claimed under: the write applies only to it
 */
record Outcome(long id, int attempt, String state, long delayMillis, String errorClass, String errorMessage,
    String errorStack, Long slotKey, long owner) {

  static Outcome of(RunningJob job, String state) {
    return new Outcome(job.id(), job.attempt(), state, 0, null, null, null, job.slotKey(), job.owner());
  }
}
