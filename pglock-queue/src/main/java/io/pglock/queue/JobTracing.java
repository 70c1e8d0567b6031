package io.pglock.queue;

import java.util.Map;

/**
 * Carries a trace context from the enqueue of a job to each attempt of its handler: set one with
 * {@link JobQueueBuilder#tracing(JobTracing)}. The module {@code pglock-micrometer} has one for
 * OpenTelemetry ({@code io.pglock.micrometer.OpenTelemetryJobTracing}); the queue itself knows no
 * tracing library.
 *
 * <p><b>What happens.</b> Each enqueue call ({@link JobQueue#enqueue(JobRequest)},
 * {@link JobQueue#enqueueAll(java.util.List)} and their variants on a caller's connection) calls
 * {@link #capture()} once, on the enqueuing thread, before its statement; the map it returns is
 * stored with every job of the call (in the column {@code trace_context}, schema version 11). Each
 * attempt of a job then calls {@link #startAttempt(JobContext, Map)} on the handler's thread, just
 * before the payload is read and the handler runs, with the map stored (empty when none was), and
 * ends what it returned with {@link Attempt#end(JobListener.AttemptResult, Throwable)} on the same
 * thread once the handler has returned or thrown.
 *
 * <p><b>Contract.</b> Methods are called on enqueuing and handler threads, several at once, so an
 * implementation must be thread-safe. They must be quick and must not block or do I/O (exporting
 * spans belongs in the tracing library's own background threads). An exception thrown by
 * {@link #capture()} is caught and logged (the first at WARN, the rest at DEBUG) and the jobs are
 * enqueued with no context; one thrown by {@link #startAttempt} is logged likewise and the attempt
 * runs untraced; one thrown by {@link Attempt#end} is logged likewise and changes nothing in the job.
 *
 * <p><b>Cost.</b> With no tracing set, an enqueue stores a null and a claim returns one, and nothing
 * else is done per job. With tracing set, an enqueue call costs one {@link #capture()} and one small
 * JSON text, whatever the number of jobs; an attempt costs reading that text back into a map (not
 * done when it is null) and whatever the implementation does.
 *
 * <p>Claims do not appear here: a job claimed and given back unstarted (at shutdown, or lost while it
 * waited for a handler thread) is not an attempt, so it starts nothing, as {@link JobListener} does
 * not hear of it either.
 */
public interface JobTracing {

  /**
   * Captures the context to carry from the enqueuing thread to the jobs' attempts: for a W3C trace
   * context, the {@code traceparent} and, if any, {@code tracestate} headers. Called once per
   * enqueue call, on the enqueuing thread, before the insert; every job of the call carries the same
   * map. Keys and values are stored as a JSON object of strings, so keep them small (a few hundred
   * characters at most): they are written with every job and read back with every claim.
   *
   * @return the context to store with the jobs, or null or an empty map to store none
   */
  Map<String, String> capture();

  /**
   * Starts what an attempt needs (a span, a context made current on this thread), on the handler's
   * thread, just before the payload is read and the handler called. The worker calls
   * {@link Attempt#end} on what this returns exactly once, on the same thread, when the handler has
   * returned or thrown, whatever the outcome (including a cancelled job, and an attempt whose
   * outcome is dropped because the worker no longer owned the job).
   *
   * @param job the attempt: the job's id, queue, kind and attempt number (the handler sees the same
   *     context; do not keep it past {@link Attempt#end})
   * @param carried the map {@link #capture()} returned at the enqueue, read back from the job's row;
   *     empty (never null) when the job carries none (enqueued with no tracing set, or with nothing
   *     current)
   * @return what to end after the handler; null when there is nothing to end
   */
  Attempt startAttempt(JobContext job, Map<String, String> carried);

  /**
   * What {@link #startAttempt} started for one attempt; {@link #end} is called exactly once, on the
   * handler's thread.
   */
  @FunctionalInterface
  interface Attempt {
    /**
     * Ends the attempt's trace (closes the scope made current, ends the span), after the handler.
     * The job's outcome is not written yet at this point: it goes with the worker's next round trip.
     *
     * @param result what became of the attempt, as {@link JobListener#attemptEnded} hears it
     * @param failure what the handler threw, or null when it returned
     */
    void end(JobListener.AttemptResult result, Throwable failure);
  }
}
