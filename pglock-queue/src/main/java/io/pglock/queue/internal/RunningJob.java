package io.pglock.queue.internal;

import io.pglock.queue.JobContext;

/** One attempt being run by a handler thread: the {@link JobContext} its handler sees. */
final class RunningJob implements JobContext {
  private final long id;
  private final String queue;
  private final String kind;
  private final int attempt;
  private final int maxAttempts;
  private final String payloadJson;
  private final Long slotKey;
  private final long owner;
  /** Asked at every {@link #isOwned()}: is the lock or lease still certainly held, by the monotonic clock. */
  private final Claims claims;
  private volatile boolean cancelled;
  private volatile boolean owned = true;
  /** The handler's thread while it runs, to interrupt it; null before and after. */
  private volatile Thread thread;

  RunningJob(long id, String queue, String kind, int attempt, int maxAttempts, String payloadJson, boolean cancelled,
      Long slotKey, long owner, Claims claims) {
    this.claims = claims;
    this.slotKey = slotKey;
    this.owner = owner;
    this.id = id;
    this.queue = queue;
    this.kind = kind;
    this.attempt = attempt;
    this.maxAttempts = maxAttempts;
    this.payloadJson = payloadJson;
    this.cancelled = cancelled;
  }

  @Override
  public long id() {
    return id;
  }

  @Override
  public String queue() {
    return queue;
  }

  @Override
  public String kind() {
    return kind;
  }

  @Override
  public int attempt() {
    return attempt;
  }

  @Override
  public int maxAttempts() {
    return maxAttempts;
  }

  @Override
  public String payloadJson() {
    return payloadJson;
  }

  /** {@return the owner (session) it was claimed under} */
  long owner() {
    return owner;
  }

  /** {@return the per-key concurrency slot lock it holds, or null} */
  Long slotKey() {
    return slotKey;
  }

  @Override
  public boolean isCancelled() {
    return cancelled;
  }

  /**
   * True until the worker gave the job up; it also turns false the moment the lock's or lease's
   * deadline passes (as {@link io.pglock.LockHandle#isHeld()} does), without waiting for the watch
   * thread to notice: a handler paused past the deadline reads false when it resumes, before it can
   * act on a job another worker may be running by then.
   */
  @Override
  public boolean isOwned() {
    return owned && claims.owns(this);
  }

  /** {@return false once the worker gave the job up (lost, or its outcome is to be dropped)} */
  boolean notGivenUp() {
    return owned;
  }

  synchronized void running(Thread t) {
    thread = t;
    if (!owned || cancelled) {
      t.interrupt(); // told before it started
    }
  }

  /** Synchronized with {@link #interrupt()}: after this, no interrupt of this job reaches the thread. */
  synchronized void done() {
    thread = null;
    Thread.interrupted(); // the pool's thread must not carry our interrupt into its next job
  }

  /** An operator asked to cancel: the handler is told and interrupted. */
  void cancel() {
    if (!cancelled) {
      cancelled = true;
      interrupt();
    }
  }

  /** The worker no longer owns the job: the handler is told and interrupted; its outcome will be dropped. */
  void lose() {
    if (owned) {
      owned = false;
      interrupt();
    }
  }

  private synchronized void interrupt() {
    Thread t = thread;
    if (t != null) {
      t.interrupt();
    }
  }

  @Override
  public String toString() {
    return "job " + id + " (" + kind + ", attempt " + attempt + "/" + maxAttempts + ")";
  }
}
