package io.pglock.queue;

/**
 * One running attempt of a job, as its handler sees it. When the job is cancelled, or the worker
 * loses ownership (its connection dropped, its lease ran out, or shutdown's deadline passed), the
 * handler's thread is interrupted and {@link #shouldStop()} turns true: stop soon, the outcome of
 * an attempt that lost ownership is not recorded (another worker may run the job again).
 */
public interface JobContext {
  /** {@return the job's id} */
  long id();

  /** {@return the job's queue} */
  String queue();

  /** {@return the job's kind} */
  String kind();

  /** {@return this attempt's number, from 1} */
  int attempt();

  /** {@return how many attempts the job may have in all} */
  int maxAttempts();

  /** {@return the payload as the JSON text stored} */
  String payloadJson();

  /** {@return true once an operator asked to cancel the job} */
  boolean isCancelled();

  /** {@return true while this worker still owns the job (its lock or lease is certainly held)} */
  boolean isOwned();

  /** {@return true when the handler should stop: cancelled, or no longer owned} */
  default boolean shouldStop() {
    return isCancelled() || !isOwned();
  }
}
