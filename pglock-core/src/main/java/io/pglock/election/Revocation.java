package io.pglock.election;

/** Why a term ended: the reason {@link Candidate#revoked(Term, Revocation)} is given. */
public enum Revocation {
  /** This node gave up the term with {@link LeaderElection#resign()}; it stands again at once. */
  RELEASED,
  /**
   * The connection that held the election's lock failed: the backend was terminated
   * ({@code pg_terminate_backend}), the server restarted or crashed, or the network failed. The
   * server has already freed the lock, so another node may have been elected before this
   * revocation arrived: the fencing check covers that gap.
   */
  CONNECTION_LOST,
  /**
   * No round trip succeeded within the lease (a pause, a silent network): the server may free the
   * lock from this moment on. pglock counts the lock as lost at its own deadline, which comes before
   * the server can free the lock, so no other node can have been elected yet when the loss is
   * signalled (the callback itself may run later).
   */
  LEASE_EXPIRED,
  /**
   * The node reported itself broken ({@link LeaderElection#reportBroken(Throwable)}) or its
   * {@link Candidate#elected(Term)} threw; it backs off before standing again.
   */
  BROKEN,
  /**
   * The election was closed ({@link LeaderElection#close()}) or its {@code PgLocks} was; the lock is
   * released after this revocation returns, so that a successor is elected only then.
   */
  SHUTDOWN
}
