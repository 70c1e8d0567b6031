package io.pglock.schedule;

/**
 * What a task does with slots that passed while nobody could run them (every node was down, the
 * database was unreachable, or the task was paused): a slot is missed when it is found unclaimed
 * more than {@link Task.Builder#missedAfter} after its time.
 */
public enum MissedSlots {
  /** Record them as skipped; run only the slots that come from now on. */
  SKIP,
  /** Run the most recent missed slot once (as a catch-up run); record the older ones as skipped. */
  RUN_ONCE,
  /**
   * Run each missed slot, oldest first, up to {@link Task.Builder#catchUpLimit} of them (the most
   * recent ones); older ones are recorded as skipped.
   */
  RUN_EACH
}
