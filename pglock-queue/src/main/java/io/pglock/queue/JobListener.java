package io.pglock.queue;

/**
 * Hears how a {@link JobWorker}'s attempts end, for metrics. Register one with
 * {@link JobWorkerBuilder#listener(JobListener)}; the module {@code pglock-micrometer} has one that
 * records Micrometer meters. Every method does nothing by default, so that an implementation
 * overrides only what it needs and keeps compiling when events are added.
 *
 * <p><b>Contract.</b> Methods are called on the worker's handler threads, several at once, so an
 * implementation must be thread-safe. They must be quick (record a timer), must not block and must
 * not do I/O. An exception thrown by a method is caught and logged by the worker (the first at WARN,
 * the rest at DEBUG) and changes nothing in the job.
 *
 * <p>Events carry the queue and the kind, never a job's id or payload: metrics tagged with those
 * would grow without bound.
 */
public interface JobListener {

  /** What became of an attempt, as its handler ended. */
  enum AttemptResult {
    /** The handler returned: the job is {@link JobState#SUCCEEDED}. */
    SUCCEEDED,
    /** The handler threw and the job has attempts left: it is {@link JobState#RETRYABLE}, due after the backoff. */
    RETRY,
    /**
     * The handler threw on the job's last attempt, or threw {@link DiscardJobException}: the job is
     * {@link JobState#DISCARDED}.
     */
    DISCARDED,
    /** The handler threw after an operator cancelled the job: it is {@link JobState#CANCELLED}. */
    CANCELLED,
    /**
     * The worker no longer owned the job when its handler ended (its lock or lease was lost, or the
     * shutdown deadline passed): the outcome was dropped and the job runs again, here or elsewhere.
     */
    ABANDONED
  }

  /**
   * An attempt's handler ended, on the handler's thread, before its outcome is written (the write
   * goes with the worker's next round trip, and may still fail: the job then runs again). Jobs
   * claimed and given back unstarted (at shutdown, or lost while they waited for a thread) are not
   * attempts and are not reported.
   *
   * @param queue the worker's queue
   * @param kind the job's kind
   * @param result what became of the attempt
   * @param durationNanos how long the handler ran (reading the payload included), by {@link System#nanoTime()}
   */
  default void attemptEnded(String queue, String kind, AttemptResult result, long durationNanos) {}
}
