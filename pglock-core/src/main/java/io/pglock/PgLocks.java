package io.pglock;

import java.sql.Connection;
import javax.sql.DataSource;

/**
 * The entry point: advisory locks on one PostgreSQL database, for one namespace of names.
 *
 * <pre>{@code
 * PgLocks locks = PgLocks.builder(dataSource).namespace("billing").build();
 * try (LockHandle h = locks.lock("invoice-42").acquire(Duration.ofSeconds(5))) {
 *   ...
 * }
 * }</pre>
 *
 * <p>Session locks are held on pglock's own connections ("lock sessions"), taken from the
 * {@link DataSource} (a plain one or a pool such as HikariCP) and kept for the session's life; a
 * pooled connection goes back to its pool with no lock held and every setting as it was. Many locks share one lock
 * session; each session batches pending acquires, releases and heartbeats into one round trip.
 * Transaction-scoped locks ({@link #inTransaction(Connection)}) run on the caller's connection.
 *
 * <p>Thread-safe. Create one per database and namespace and share it; close it on shutdown, which
 * releases every lock still held (their handles report {@link LossCause#CLOSED}) and closes the
 * lock sessions. Every method but {@link #close()} throws {@link PgLocksClosedException} after close.
 */
public interface PgLocks extends AutoCloseable {

  /**
   * A builder for locks on the database the data source connects to.
   *
   * @param dataSource where lock sessions come from: a plain (non-pooling) PostgreSQL data source
   * @return a new builder
   */
  static PgLocksBuilder builder(DataSource dataSource) {
    return new PgLocksBuilder(dataSource);
  }

  /** {@return the settings this instance was built with} */
  PgLocksConfig config();

  /**
   * The key of a name in this instance's namespace.
   *
   * @param name the lock's name: not blank, at most 512 UTF-8 bytes
   * @return the name's key
   */
  LockKey key(String name);

  /**
   * An exclusive session lock on a name in this instance's namespace.
   *
   * @param name the lock's name: not blank, at most 512 UTF-8 bytes
   * @return the lock (nothing is acquired yet)
   * @throws UnsupportedOperationException if built with {@link PgLocksBuilder#transactionLocksOnly()}
   */
  SessionLock lock(String name);

  /**
   * An exclusive session lock on any key.
   *
   * @param key the key, in any key space
   * @return the lock (nothing is acquired yet)
   * @throws UnsupportedOperationException if built with {@link PgLocksBuilder#transactionLocksOnly()}
   */
  SessionLock lock(LockKey key);

  /**
   * Shared and exclusive session locks on a name in this instance's namespace.
   *
   * @param name the lock's name: not blank, at most 512 UTF-8 bytes
   * @return the pair of locks (nothing is acquired yet)
   * @throws UnsupportedOperationException if built with {@link PgLocksBuilder#transactionLocksOnly()}
   */
  SessionReadWriteLock readWriteLock(String name);

  /**
   * Shared and exclusive session locks on any key.
   *
   * @param key the key, in any key space
   * @return the pair of locks (nothing is acquired yet)
   * @throws UnsupportedOperationException if built with {@link PgLocksBuilder#transactionLocksOnly()}
   */
  SessionReadWriteLock readWriteLock(LockKey key);

  /**
   * A semaphore with a number of permits, on a name in this instance's namespace: at most that many
   * holders at once across every process that uses the same name and number (see
   * {@link SessionSemaphore}, and {@code docs/semaphores.md} for processes that disagree on the
   * number). Permits are session locks on the names {@code "semaphore:<name>#<permit>"}, which
   * ordinary locks must not use.
   *
   * @param name the semaphore's name: not blank, at most 497 UTF-8 bytes
   * @param permits how many holders at once, from 1 to {@value SessionSemaphore#MAX_PERMITS}
   * @return the semaphore (nothing is acquired yet)
   * @throws IllegalArgumentException if the name is null, blank or too long, or the number of
   *     permits is out of range
   * @throws UnsupportedOperationException if built with {@link PgLocksBuilder#transactionLocksOnly()}
   */
  SessionSemaphore semaphore(String name, int permits);

  /**
   * Transaction-scoped locks on the caller's connection, which must have autocommit off.
   *
   * @param connection the caller's connection to the same database, in a transaction
   * @return the transaction locks of that connection
   * @throws IllegalStateException if autocommit is on
   * @throws UnsupportedDatabaseException if the connection is not to PostgreSQL
   */
  TransactionLocks inTransaction(Connection connection);

  /**
   * Opens a {@link LeasedSession}: a connection of its own, set up like a lock session, for
   * statements that take and release many advisory locks at once (pglock's job queue). It is not
   * counted in {@link #openSessions()} and not closed by {@link #close()}: close it first.
   *
   * @param role a short tag for {@code application_name} ({@code pglock:<node>:<role>:<namespace>}),
   *     1 to 16 printable ASCII characters without spaces or {@code ':'}
   * @return the open session; the caller closes it
   * @throws IllegalArgumentException if the role is not such a tag
   * @throws UnsupportedOperationException if built with {@link PgLocksBuilder#transactionLocksOnly()}
   * @throws LockSessionException if the connection cannot be opened or set up
   * @throws UnsupportedDatabaseException if a transaction-mode pooler sits in between
   */
  LeasedSession leasedSession(String role);

  /** {@return how many server locks this instance holds now} Shared holders of a key count once. */
  int heldLocks();

  /**
   * {@return the cap on server locks held at once, in force} See
   * {@link PgLocksBuilder#maxHeldLocks(int)}. 0 for an instance built with
   * {@link PgLocksBuilder#transactionLocksOnly()}, which holds no session lock.
   */
  int maxHeldLocks();

  /** {@return how many lock and wait sessions (connections) are open now} */
  int openSessions();

  /**
   * How long until the lease of the open lock session nearest its deadline runs out, by the stricter
   * of the monotonic and wall clocks: the margin this node has before it must count its locks as
   * lost. A healthy session stays between about two thirds of the lease and the whole of it
   * (heartbeats every third); a value falling toward zero means round trips are not coming back.
   * Health checks and dashboards show it; nothing needs to poll it for correctness, since
   * {@link LockHandle#isHeld()} checks the deadline itself.
   *
   * @return the smallest time left over the open lock sessions (zero if one has run out), or empty
   *     when no lock session is open (none needed yet, or built with
   *     {@link PgLocksBuilder#transactionLocksOnly()})
   */
  java.util.Optional<java.time.Duration> leaseMargin();

  /**
   * Releases every held lock, closes every lock session, writes the lock history's last records
   * and stops the background threads. Waits
   * at most {@link PgLocksBuilder#connectTimeout(java.time.Duration) connectTimeout} (plus thread
   * scheduling) for the releases to reach the server, whatever the network does; a session that
   * cannot finish by then is aborted, which frees its locks on the server as well. Idempotent.
   */
  @Override
  void close();
}
