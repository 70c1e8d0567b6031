package io.pglock.election;

/**
 * A node's part in a {@link LeaderElection}: told when it is elected and when its term ends.
 *
 * <p><b>Threading</b>: the callbacks of one election run on that election's own thread
 * ({@code pglock-<node>-election-<name>}), one at a time and in order: every {@code elected} is
 * followed by exactly one {@code revoked} for the same term before the next {@code elected}. They
 * never run on pglock's session threads. While a callback runs the election does not watch its
 * lock, so callbacks should return promptly: start the leader's work on a thread of your own in
 * {@code elected} and stop it in {@code revoked}.
 *
 * <p>A callback may call {@link LeaderElection#resign()}, {@link LeaderElection#reportBroken} or
 * {@link LeaderElection#close()} (which then does not wait for the election to stop). A callback
 * may see a state that has moved on: when {@code elected} runs, the term may already be lost; its
 * {@code revoked} follows at once.
 */
public interface Candidate {

  /**
   * This node is the leader, for the given term, until {@link #revoked} is called for it. An
   * exception thrown here is logged and counts as {@link LeaderElection#reportBroken}: the term
   * ends with {@link Revocation#BROKEN}.
   *
   * @param term the term: its fencing token is for the leader's writes to check
   */
  void elected(Term term);

  /**
   * The term has ended. For {@link Revocation#SHUTDOWN}, {@link Revocation#RELEASED} and
   * {@link Revocation#BROKEN} the election's lock is released only after this returns, so no
   * successor is elected before then; for a lost connection or lease the lock is gone already. An
   * exception thrown here is logged and ignored.
   *
   * @param term the term that ended
   * @param reason why it ended
   */
  void revoked(Term term, Revocation reason);
}
