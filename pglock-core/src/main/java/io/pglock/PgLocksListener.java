package io.pglock;

/**
 * Hears what a {@link PgLocks} does, for metrics: acquire attempts, lost locks, changes of
 * leadership. Register one with {@link PgLocksBuilder#listener(PgLocksListener)}; the module
 * {@code pglock-micrometer} has one that records Micrometer meters. Every method does nothing by
 * default, so that an implementation overrides only what it needs and keeps compiling when events
 * are added.
 *
 * <p><b>Contract.</b> Methods are called synchronously on pglock's threads and the callers'
 * threads, often on the hot path of an acquire or on a lock session's loop: they must be quick
 * (increment a counter, record a timer), must not block, must not do I/O and must not call back
 * into pglock. They may be called concurrently from several threads, so an implementation must be
 * thread-safe. An exception thrown by a method is caught and logged by pglock (the first at WARN,
 * the rest at DEBUG) and changes nothing in pglock.
 *
 * <p><b>Cardinality.</b> Events carry only low-cardinality values (the namespace, an election's
 * name, enums), never a lock's name or key: a name may be unique per business object.
 */
public interface PgLocksListener {

  /** Whether an acquire waited for the lock. */
  enum AcquireKind {
    /** {@link SessionLock#tryAcquire()}: answered at once, without waiting for another holder. */
    TRY,
    /**
     * {@link SessionLock#tryAcquire(java.time.Duration)}, {@link SessionLock#acquire} and the like
     * (and so {@link SessionLock#run}): waited, up to a timeout or without limit.
     */
    WAIT
  }

  /** How an acquire attempt ended. */
  enum AcquireOutcome {
    /** The lock was granted: the caller got a handle. */
    ACQUIRED,
    /** Another holder had it: a try found it busy, or a wait timed out (also when it then threw {@link LockTimeoutException}). */
    NOT_ACQUIRED,
    /**
     * The attempt threw something else: the lock session failed, the cap on held locks was reached,
     * a deadlock was detected, the thread was interrupted, or the {@link PgLocks} was closed.
     */
    FAILED
  }

  /**
   * A session-lock acquire attempt finished (exclusive or shared, through {@link SessionLock} or
   * {@link SessionReadWriteLock}), on the thread that asked for the lock, just before the call
   * returns or throws.
   *
   * @param namespace the namespace of the {@link PgLocks} (its {@link PgLocksConfig#namespace()})
   * @param mode the lock's mode
   * @param kind whether the attempt could wait
   * @param outcome how it ended
   * @param nanos how long the call took, by {@link System#nanoTime()}
   */
  default void acquireEnded(String namespace, LockMode mode, AcquireKind kind, AcquireOutcome outcome, long nanos) {}

  /**
   * A held lock was lost before its handle was closed: called once per lost handle (a lock shared
   * by several holders in this process counts once per handle), when pglock learns of the loss,
   * which may be after {@link LockHandle#isHeld()} already turned false by the lease clock. Called
   * on a lock session's thread or the thread that closes the {@link PgLocks}; the handle's own
   * callbacks ({@link LockHandle#onLoss}) run later on the callback executor.
   *
   * @param namespace the namespace of the {@link PgLocks}
   * @param cause why it was lost
   */
  default void lockLost(String namespace, LossCause cause) {}

  /**
   * This node became the leader of an election, or stopped being it; called on the election's
   * thread, in order for one election: {@code true} just before the candidate's {@code elected}
   * callback, {@code false} just before its {@code revoked} callback. A term lost by the lease
   * clock is reported when the election's thread sees it, within a fraction of a second.
   *
   * @param namespace the namespace of the {@link PgLocks} the election runs on
   * @param election the election's name
   * @param leader true if this node now leads, false if it no longer does
   */
  default void leadershipChanged(String namespace, String election, boolean leader) {}
}
