package io.pglock.queue.internal;

import java.sql.SQLException;
import java.util.Collection;
import java.util.List;

/**
 * How a worker talks to the job table in one claiming mode: every method is one round trip, run by
 * the worker's I/O thread only.
 */
interface Claims extends AutoCloseable {

  /** Opens what the mode needs (the advisory mode's session); a no-op when it is open. */
  void open() throws SQLException;

  /** {@return true if {@link #open()} would replace an ended session (whose jobs are then lost)} */
  boolean needsOpen();

  /** {@return true while the running job is certainly still this worker's (its lock or lease held)} */
  boolean owns(RunningJob job);

  /**
   * After a failed statement on a live connection: releases every advisory lock the session holds
   * that none of the running jobs owns (advisory mode; nothing in lease mode).
   *
   * @return how many locks were released
   */
  int reconcile(java.util.List<RunningJob> running) throws SQLException;

  /** {@return nanoseconds until a round trip is due to keep ownership (Long.MAX_VALUE: never)} */
  long untilHeartbeatNanos(boolean anyRunning);

  /**
   * Writes outcomes (releasing the jobs), then claims up to {@code limit} jobs, in one round trip.
   *
   * @param outcomes may be empty
   * @param limit 0 to only write the outcomes
   * @param heldSlots the per-key slot locks the worker's running jobs hold (the claim must not take
   *     them again)
   */
  List<Claimed> completeAndClaim(List<Outcome> outcomes, int limit, Collection<Long> heldSlots) throws SQLException;

  /**
   * The heartbeat: keeps ownership of the running jobs and learns which were cancelled or lost.
   *
   * @return the running jobs that a cancel was asked for, and (lease mode) those no longer owned
   */
  Heartbeat heartbeat(Collection<Long> running) throws SQLException;

  /** Frees the running jobs whose worker is gone (one batch of candidates). @return how many */
  int rescue() throws SQLException;

  /** Deletes one small batch of finished jobs past their retention. @return how many */
  int prune(int batch) throws SQLException;

  /** True if the error means the connection (and with it the advisory locks) is gone. */
  boolean connectionLost(SQLException e);

  /** Releases the connection (advisory: every lock of the session first). Never throws. */
  @Override
  void close();

  /**
   * What a heartbeat learnt.
   *
   * @param cancelled running jobs an operator asked to cancel
   * @param lost running jobs this worker no longer owns
   */
  record Heartbeat(List<Long> cancelled, List<Long> lost) {}
}
