package io.pglock;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * A lock session of your own: one connection set up exactly like pglock's lock sessions (the
 * server frees its locks no later than the lease after its last statement, a transaction-mode
 * pooler is refused), on which your own statements take and release session advisory locks in
 * bulk. It is the building block of pglock's job queue, which claims and releases many jobs' locks
 * per statement; use {@link SessionLock} for ordinary locking.
 *
 * <p>The session does not heartbeat by itself: make a round trip through {@link #call} at least
 * every {@link #untilHeartbeat()} while it holds locks, or the server ends it when the lease runs
 * out (which frees the locks: the safe side). A round trip that returns renews the lease; between
 * round trips, {@link #leaseValid()} says whether the locks are still certainly held. Once the lease
 * has run out the session is over for good, even if the connection would still answer: {@link #call}
 * drops the connection and throws.
 *
 * <p>Not thread-safe to interleave: {@link #call} runs one caller at a time. {@link #close()}
 * releases every advisory lock of the session and gives the connection back as it came.
 */
public interface LeasedSession extends AutoCloseable {

  /**
   * Statements run on the session's connection (autocommit on; leave it so).
   *
   * @param <T> what the statements return
   */
  @FunctionalInterface
  interface Work<T> {
    /**
     * Runs statements on the connection.
     *
     * @param connection the session's connection
     * @return what the caller wants back
     * @throws SQLException what a statement threw
     */
    T run(Connection connection) throws SQLException;
  }

  /**
   * Runs statements on the session's connection, one caller at a time; the lease is renewed when
   * they return. A connection failure ends the session (its locks are gone on the server).
   *
   * @param work the statements
   * @param <T> what they return
   * @return what the work returned
   *
   * @throws LockSessionException if the session ended before (connection lost, closed)
   * @throws SQLException what the statements threw; after a connection failure the session is dead
   */
  <T> T call(Work<T> work) throws SQLException;

  /** {@return true while the session is alive and its lease has not run out} */
  boolean leaseValid();

  /** {@return how long until a round trip is due to keep the lease; zero when it is due} */
  Duration untilHeartbeat();

  /** {@return the server process id of the session, as {@code pg_locks.pid} shows it} */
  int backendPid();

  /** {@return why the session ended, or null while it is alive} */
  LossCause lossCause();

  /**
   * Releases every advisory lock of the session and gives the connection back with its settings
   * restored; if that fails the connection is dropped (which frees the locks as well). Idempotent.
   */
  @Override
  void close();
}
