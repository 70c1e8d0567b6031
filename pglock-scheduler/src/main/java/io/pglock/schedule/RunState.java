package io.pglock.schedule;

/** The state of a run row. */
public enum RunState {
  /** A node runs it now (or ran it and has not been seen to finish: see {@link #DISCONNECTED}). */
  RUNNING,
  /** The task returned normally. */
  SUCCEEDED,
  /** The task threw; the row keeps the error. */
  FAILED,
  /** The run was told to stop (its deadline passed, or its node lost the task's lock) and did. */
  INTERRUPTED,
  /** The slot was not run, by policy ({@link MissedSlots}, {@link Overlap}, or a pause). */
  SKIPPED,
  /**
   * The runner's node disappeared mid-run (its process or connection died): another node found the
   * row running with nobody holding the task's lock, and noted when. The task's
   * {@link Task.Builder#retryDisconnected} policy says whether the slot runs again.
   */
  DISCONNECTED
}
