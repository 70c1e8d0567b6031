package io.pglock;

import java.time.Duration;
import java.util.Optional;

/**
 * A named semaphore with a fixed number of permits, shared by every process that uses the same
 * database, namespace, name and number of permits. A permit is an exclusive session lock on one of
 * the semaphore's permit keys ({@link #permitKey(int)}), so the handle of a permit is a
 * {@link LockHandle} like any other: closing it gives the permit back, and it reports its loss
 * ({@link LockHandle#lost()}, {@link LockHandle#onLoss}) when the lock session's connection fails
 * or its lease runs out, at which moment the server has freed (or may free) the permit. No permit
 * outlives its holder's connection. This object only names the semaphore and may be kept and
 * shared between threads. See {@code docs/semaphores.md}.
 *
 * <p><b>The count is enforced by the server</b>: at most {@link #permits()} holders at once, across
 * every process, as long as they all agree on the number of permits. Processes that disagree share
 * the permits they have in common: together they hold at most the largest number any of them uses,
 * and one with fewer permits finds the semaphore full while its first permits are taken, even if
 * permits it does not know of are free.
 *
 * <p><b>Not reentrant</b>, like {@link SessionLock}: each acquire takes another permit, whichever
 * thread asks, and a thread that holds every permit and waits for one more waits until its timeout.
 *
 * <p><b>Cost</b>: a try goes through the permits one by one, from a random one on, until one is
 * granted: up to {@link #permits()} round trips when the semaphore is (nearly) full. A wait sleeps
 * on one permit on the server (the engine's blocking wait) for a bounded time, from 10 ms doubling
 * to {@value #MAX_WAIT_CHUNK_MILLIS} ms, and tries every permit again in between, so a permit
 * freed other than the one waited on is found within about {@value #MAX_WAIT_CHUNK_MILLIS} ms.
 */
public interface SessionSemaphore {

  /** The most permits a semaphore may have: a try may cost one round trip per permit. */
  int MAX_PERMITS = 1024;

  /** The longest a waiter sleeps on one permit before it tries every permit again, in milliseconds. */
  long MAX_WAIT_CHUNK_MILLIS = 200;

  /** The prefix of the lock names of permits; ordinary locks must not use names that start with it. */
  String PERMIT_NAME_PREFIX = "semaphore:";

  /** {@return the semaphore's name, as given to {@link PgLocks#semaphore(String, int)}} */
  String name();

  /** {@return the number of permits this semaphore object uses} */
  int permits();

  /**
   * The lock key of one permit: the name {@code "semaphore:" + name() + "#" + permit} in the
   * {@code PgLocks}' namespace, so in SQL {@code pglock.key(namespace, 'semaphore:<name>#<permit>')}.
   *
   * @param permit the permit's number, from 0 to {@code permits() - 1}
   * @return the permit's key
   * @throws IllegalArgumentException if the number is outside that range
   */
  LockKey permitKey(int permit);

  /**
   * Takes a permit if one is free now; never waits for a holder. Costs one round trip per permit
   * tried, up to {@link #permits()} when the semaphore is (nearly) full; permits held through the
   * same {@code PgLocks} are skipped without one.
   *
   * @return the handle of the permit, or empty if every permit is held
   * @throws PgLocksClosedException if the {@code PgLocks} is closed
   * @throws LockCapacityException if the cap on held locks is reached
   * @throws LockSessionException if the database cannot be reached or gives no answer within the
   *     connect timeout (nothing is then held)
   */
  Optional<LockHandle> tryAcquire();

  /**
   * Waits up to the timeout for a permit. Returns within the timeout plus one more try of every
   * permit, plus {@link PgLocksBuilder#connectTimeout(Duration) connectTimeout}. A try that fails
   * for want of the database while time is left is made again at the next round; only the last
   * round's failure is thrown.
   *
   * @param timeout the longest to wait, from zero (one try of every permit) to a year
   * @return the handle of the permit, or empty if the timeout passed first (nothing is then held)
   * @throws InterruptedException if the thread is interrupted while waiting (nothing is then held)
   * @throws IllegalArgumentException if the timeout is null, negative or longer than a year
   * @throws PgLocksClosedException if the {@code PgLocks} is closed
   * @throws LockCapacityException if the cap on held locks is reached
   * @throws LockSessionException if the database cannot be reached (nothing is then held)
   */
  Optional<LockHandle> tryAcquire(Duration timeout) throws InterruptedException;

  /**
   * Waits up to the timeout for a permit, as {@link #tryAcquire(Duration)} does.
   *
   * @param timeout the longest to wait, from zero (one try of every permit) to a year
   * @return the handle of the permit
   * @throws LockTimeoutException if the timeout passed first (nothing is then held)
   * @throws InterruptedException if the thread is interrupted while waiting (nothing is then held)
   * @throws IllegalArgumentException if the timeout is null, negative or longer than a year
   * @throws PgLocksClosedException if the {@code PgLocks} is closed
   * @throws LockCapacityException if the cap on held locks is reached
   * @throws LockSessionException if the database cannot be reached (nothing is then held)
   */
  LockHandle acquire(Duration timeout) throws InterruptedException;

  /**
   * Waits as long as it takes for a permit, unless interrupted; through a server restart or an
   * outage it keeps waiting (a try that fails is made again at the next round).
   *
   * @return the handle of the permit
   * @throws InterruptedException if the thread is interrupted while waiting (nothing is then held)
   * @throws PgLocksClosedException if the {@code PgLocks} is closed
   * @throws LockCapacityException if the cap on held locks is reached
   */
  LockHandle acquire() throws InterruptedException;
}
