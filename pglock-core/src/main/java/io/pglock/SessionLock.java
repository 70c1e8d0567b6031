package io.pglock;

import java.time.Duration;
import java.util.Optional;

/**
 * A session-scoped advisory lock on one key, in one mode. Each successful acquire returns a new
 * {@link LockHandle}; this object only names the lock and may be kept and shared between threads.
 *
 * <p><b>Not reentrant.</b> A key held through a {@link PgLocks} is treated, for every other
 * acquire through the same {@code PgLocks}, exactly as if another process held it: a try fails and
 * a wait waits, whichever thread asks (ownership belongs to handles, not threads). Shared holders
 * of the same key share one server lock. pglock never stacks a key twice on one connection.
 *
 * <p><b>Waiting</b> is fair within one {@code PgLocks} (first come, first served, and a waiting
 * exclusive acquire stops new shared holders from overtaking it). A waiter is woken as soon as the
 * lock is free: by the releasing handle when both are local, by the server otherwise.
 */
public interface SessionLock {

  /** {@return the key} */
  LockKey key();

  /** {@return the mode handles from this lock hold} */
  LockMode mode();

  /**
   * This lock, with a fencing token on every grant ({@link LockHandle#fencingToken()}), taken in the
   * same statement as the grant. A fenced lock is never passed between threads of this process
   * without the server, since every holder needs a token of its own.
   *
   * @return the fenced lock (this one if it already is)
   * @throws UnsupportedOperationException if the lock is shared: fencing tokens order exclusive holders
   * @throws SchemaMissingException if the schema lacked the fencing functions when the
   *     {@code PgLocks} was built ({@link PgLockSchema#migrate})
   */
  SessionLock withFencing();

  /** {@return true if every grant of this lock comes with a fencing token} */
  boolean fenced();

  /**
   * Takes the lock if it is free now; never waits for another holder (it does take one round trip
   * to the server unless the lock is already held here in a compatible mode).
   *
   * <p>Returns within {@link PgLocksBuilder#connectTimeout(Duration) connectTimeout}, whatever the
   * network does.
   *
   * @return the handle, or empty if another holder has the lock
   * @throws LockCapacityException if the cap on held locks is reached
   * @throws LockSessionException if the database cannot be reached or gives no answer within the
   *     connect timeout (nothing is then held: a late grant is released at once)
   */
  Optional<LockHandle> tryAcquire();

  /**
   * Waits up to the timeout for the lock. Returns within the timeout plus
   * {@link PgLocksBuilder#connectTimeout(Duration) connectTimeout}; if the session fails while it
   * waits (a restart, a terminated backend), it reconnects and waits on while time is left.
   *
   * @param timeout the longest to wait, from zero (one try) to a year
   * @return the handle, or empty if the timeout passed first (nothing is then held)
   * @throws InterruptedException if the thread is interrupted while waiting (nothing is then held)
   * @throws IllegalArgumentException if the timeout is negative or longer than a year
   */
  Optional<LockHandle> tryAcquire(Duration timeout) throws InterruptedException;

  /**
   * Waits up to the timeout for the lock. Returns within the timeout plus
   * {@link PgLocksBuilder#connectTimeout(Duration) connectTimeout}, as
   * {@link #tryAcquire(Duration)} does.
   *
   * @param timeout the longest to wait, from zero (one try) to a year
   * @return the handle
   * @throws LockTimeoutException if the timeout passed first (nothing is then held)
   * @throws InterruptedException if the thread is interrupted while waiting (nothing is then held)
   * @throws IllegalArgumentException if the timeout is negative or longer than a year
   */
  LockHandle acquire(Duration timeout) throws InterruptedException;

  /**
   * Waits as long as it takes, unless interrupted; through a server restart or an outage it
   * reconnects with backoff and keeps waiting.
   *
   * @return the handle
   * @throws InterruptedException if the thread is interrupted while waiting (nothing is then held)
   */
  LockHandle acquire() throws InterruptedException;

  /**
   * Waits as long as it takes; an interrupt does not stop the wait but stays set on return.
   *
   * @return the handle
   */
  LockHandle acquireUninterruptibly();

  /**
   * Runs the work while holding the lock: waits up to the timeout for it, runs the work, releases
   * it, and, with history on ({@link #withHistory()}, {@link PgLocksBuilder#history()}), records the
   * hold: who, when, and how it ended (released, failed with the work's exception, or lost).
   *
   * @param <T> what the work returns
   * @param timeout the longest to wait for the lock, as {@link #acquire(Duration)}
   * @param work the work; it gets the handle, to check {@link LockHandle#isHeld()} between steps
   * @return what the work returned
   * @throws LockTimeoutException if the lock was not had in time (the work did not run)
   * @throws LockNotHeldException if the lock was lost while the work ran: it completed, but not
   *     under the lock (its result is dropped)
   * @throws LockedWorkException carrying a checked exception the work threw; unchecked ones and
   *     errors are thrown as they are, and an {@code InterruptedException} too
   * @throws InterruptedException if interrupted while waiting for the lock, or thrown by the work
   */
  <T> T run(Duration timeout, LockedWork<T> work) throws InterruptedException;

  /**
   * This lock, recording every {@link #run(Duration, LockedWork) run} in the lock history.
   *
   * @return the lock with history (this one if it already has it)
   * @throws SchemaMissingException if the schema lacked the history table when the
   *     {@code PgLocks} was built (version 4, {@link PgLockSchema#migrate})
   */
  SessionLock withHistory();
}
