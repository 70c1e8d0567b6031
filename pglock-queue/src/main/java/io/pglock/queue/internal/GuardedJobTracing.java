package io.pglock.queue.internal;

import io.pglock.queue.JobContext;
import io.pglock.queue.JobListener;
import io.pglock.queue.JobTracing;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A user's {@link JobTracing} behind a guard, with the column's JSON text on the queue's side: what
 * it throws is logged (first at WARN, the rest at DEBUG), never propagated, and never changes a job.
 */
final class GuardedJobTracing {
  private static final Logger log = LoggerFactory.getLogger(GuardedJobTracing.class);
  private final JobTracing tracing;
  private final AtomicBoolean warned = new AtomicBoolean();

  GuardedJobTracing(JobTracing tracing) {
    this.tracing = tracing;
  }

  /** {@return the context to store with the jobs of an enqueue call, as JSON text, or null for none} */
  String capture() {
    try {
      return TraceContextJson.write(tracing.capture());
    } catch (RuntimeException | Error e) {
      failed("capture", e);
      return null;
    }
  }

  /**
   * Starts an attempt's trace.
   *
   * @param carried the job's column {@code trace_context}, or null
   * @return what to end after the handler, or null
   */
  JobTracing.Attempt start(JobContext job, String carried) {
    try {
      Map<String, String> context = carried == null ? Map.of() : TraceContextJson.read(carried);
      return tracing.startAttempt(job, context);
    } catch (RuntimeException | Error e) {
      failed("startAttempt", e);
      return null;
    }
  }

  /** Ends an attempt's trace, if one was started. */
  void end(JobTracing.Attempt attempt, JobListener.AttemptResult result, Throwable failure) {
    if (attempt == null) {
      return;
    }
    try {
      attempt.end(result, failure);
    } catch (RuntimeException | Error e) {
      failed("end", e);
    }
  }

  private void failed(String method, Throwable e) {
    if (warned.compareAndSet(false, true)) {
      log.warn("the JobTracing {} threw from {}; ignored (later failures are logged at DEBUG)", tracing, method, e);
    } else {
      log.debug("the JobTracing {} threw from {}; ignored", tracing, method, e);
    }
  }

  @Override
  public String toString() {
    return tracing.toString();
  }
}
