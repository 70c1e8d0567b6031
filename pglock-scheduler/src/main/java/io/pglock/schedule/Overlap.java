package io.pglock.schedule;

/**
 * What a task does when one of its slots comes while its previous run is still going (on any
 * node). No run of a task starts while another holds the task's lock; a run that lost the lock is
 * interrupted (its code may ignore that: its writes are what the fencing token is for).
 */
public enum Overlap {
  /** Record the slot as skipped. */
  SKIP,
  /** Run the slot as soon as the previous run ends, however late (it is never counted as missed). */
  QUEUE
}
