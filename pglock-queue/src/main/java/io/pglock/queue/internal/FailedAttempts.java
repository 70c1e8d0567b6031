package io.pglock.queue.internal;

import io.pglock.internal.util.Stacks;
import io.pglock.queue.DiscardJobException;
import io.pglock.queue.WorkerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What becomes of an attempt whose handler threw: retried after the backoff, discarded (its last
 * attempt, or a {@link DiscardJobException}), or cancelled (an operator asked). A decision without I/O,
 * so that it is tested on its own ({@code FailedAttemptsTest}); the I/O thread writes the outcome.
 */
final class FailedAttempts {
  private static final Logger log = LoggerFactory.getLogger(DefaultJobWorker.class);
  /** When the failure cannot even be described (a Backoff of the user's threw): retry after this. */
  static final long FALLBACK_DELAY_MILLIS = 60_000;

  private final WorkerConfig config;

  FailedAttempts(WorkerConfig config) {
    this.config = config;
  }

  /**
   * The outcome of a failed attempt; never throws: if deciding fails (a user's {@code Backoff}
   * threw), the job is retried in a minute (or discarded on its last attempt) with what is known.
   */
  Outcome outcome(RunningJob job, Throwable t) {
    try {
      return decide(job, t);
    } catch (Throwable inner) {
      log.warn("worker on queue {}: recording the failure of {} failed ({}); retrying it in a minute",
          config.queue(), job, inner.toString());
      return new Outcome(job.id(), job.attempt(), job.attempt() >= job.maxAttempts() ? "discarded" : "retryable",
          FALLBACK_DELAY_MILLIS, clean(t.getClass().getName()), "(message unavailable: " + clean(inner.toString()) + ")",
          null, job.slotKey(), job.owner());
    }
  }

  private Outcome decide(RunningJob job, Throwable t) {
    String state;
    long delay = 0;
    if (t instanceof DiscardJobException) {
      state = "discarded";
    } else if (job.isCancelled()) {
      state = "cancelled";
    } else if (job.attempt() >= job.maxAttempts()) {
      state = "discarded";
    } else {
      state = "retryable";
      delay = config.backoff().delay(job.attempt()).toMillis();
    }
    if (state.equals("discarded")) {
      log.warn("worker on queue {}: {} failed and is discarded: {}", config.queue(), job, t.toString());
    } else {
      log.debug("worker on queue {}: {} failed and is {}: {}", config.queue(), job, state, t.toString());
    }
    return new Outcome(job.id(), job.attempt(), state, delay, t.getClass().getName(),
        clean(Stacks.trim(t.getMessage(), 2000)), clean(Stacks.trimmed(t)), job.slotKey(), job.owner());
  }

  /** Text for the database: PostgreSQL's text cannot hold NUL. */
  static String clean(String s) {
    return s == null || s.indexOf('\0') < 0 ? s : s.replace("\0", "\\0");
  }
}
