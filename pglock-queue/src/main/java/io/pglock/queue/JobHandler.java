package io.pglock.queue;

/**
 * The code that runs a kind of job. Returning means success; throwing means the attempt failed and
 * the job is retried after its backoff until it runs out of attempts ({@link DiscardJobException}:
 * discarded at once).
 *
 * <p>Delivery is <b>at least once</b>: a job whose worker died after the handler's effects but
 * before the outcome was recorded runs again. Make handlers idempotent (an idempotency record
 * written in the same transaction as the effect, keyed by {@link JobContext#id()}).
 *
 * @param <T> the payload's type
 */
@FunctionalInterface
public interface JobHandler<T> {
  /**
   * Runs one attempt.
   *
   * @param payload the job's payload, read by the queue's {@link JsonMapper}
   * @param job the attempt: id, attempt number, and whether to stop ({@link JobContext#shouldStop()})
   * @throws Exception on failure
   */
  void handle(T payload, JobContext job) throws Exception;
}
