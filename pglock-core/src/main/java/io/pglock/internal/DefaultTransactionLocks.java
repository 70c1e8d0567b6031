package io.pglock.internal;

import io.pglock.LockDeadlockException;
import io.pglock.LockKey;
import io.pglock.LockMode;
import io.pglock.LockSessionException;
import io.pglock.LockTimeoutException;
import io.pglock.TransactionLocks;
import io.pglock.internal.recording.NameRecorder;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * Transaction-scoped locks on the caller's connection. A wait is one blocking statement under a
 * savepoint, bounded by {@code lock_timeout}, so that a timeout or deadlock rolls back only the
 * savepoint, never the caller's transaction. It is one statement, not a series of short ones,
 * because PostgreSQL looks for deadlocks only after a wait has lasted {@code deadlock_timeout}.
 *
 * <p>Interrupts: a {@link StatementCanceller}, armed only while the wait statement runs, keeps
 * sending cancels while the thread is interrupted (a cancel that reaches the backend between
 * statements is dropped by PostgreSQL). Every wait ends in {@link #report}, which throws
 * {@link InterruptedException} (flag cleared) if the interrupt ended the wait, and otherwise leaves
 * the flag as it is; an exception thrown instead leaves the flag as it was. For a virtual caller
 * the statements run on a platform thread ({@link PlatformThreadCall}).
 */
final class DefaultTransactionLocks implements TransactionLocks {

  private final DefaultPgLocks locks;
  private final Connection connection;

  DefaultTransactionLocks(DefaultPgLocks locks, Connection connection) {
    this.locks = locks;
    this.connection = Objects.requireNonNull(connection, "connection");
    try {
      SessionSetup.checkPostgres(connection);
      checkTransaction();
    } catch (SQLException e) {
      throw new LockSessionException("could not inspect the connection: " + SqlErrors.describe(e), e);
    }
  }

  private void checkTransaction() throws SQLException {
    if (connection.getAutoCommit()) {
      throw new IllegalStateException("the connection is in autocommit mode, so a transaction-scoped lock "
          + "would be released as soon as its statement ends; call connection.setAutoCommit(false) first, "
          + "or use a session lock (PgLocks.lock)");
    }
  }

  @Override
  public boolean tryLock(String name) {
    return tryLock(locks.key(name), LockMode.EXCLUSIVE);
  }

  @Override
  public boolean tryLock(String name, LockMode mode) {
    return tryLock(locks.key(name), mode);
  }

  @Override
  public boolean tryLock(LockKey key, LockMode mode) {
    ServerKey k = ServerKey.of(Objects.requireNonNull(key, "key"));
    Objects.requireNonNull(mode, "mode");
    locks.ensureOpen();
    try {
      checkTransaction();
      boolean granted = tryNow(k, mode);
      if (granted) {
        locks.recordTransactionLockName(key);
      }
      return granted;
    } catch (SQLException e) {
      throw failure(key, e);
    }
  }

  @Override
  public boolean tryLock(String name, Duration timeout) throws InterruptedException {
    return tryLock(locks.key(name), LockMode.EXCLUSIVE, timeout);
  }

  @Override
  public boolean tryLock(String name, LockMode mode, Duration timeout) throws InterruptedException {
    return tryLock(locks.key(name), mode, timeout);
  }

  @Override
  public boolean tryLock(LockKey key, LockMode mode, Duration timeout) throws InterruptedException {
    long nanos = checkTimeout(timeout);
    return waitFor(key, mode, System.nanoTime() + nanos, false);
  }

  @Override
  public void lock(String name) throws InterruptedException {
    lock(locks.key(name), LockMode.EXCLUSIVE);
  }

  @Override
  public void lock(String name, LockMode mode) throws InterruptedException {
    lock(locks.key(name), mode);
  }

  @Override
  public void lock(String name, Duration timeout) throws InterruptedException {
    lock(locks.key(name), LockMode.EXCLUSIVE, timeout);
  }

  @Override
  public void lock(String name, LockMode mode, Duration timeout) throws InterruptedException {
    lock(locks.key(name), mode, timeout);
  }

  @Override
  public void lock(LockKey key, LockMode mode, Duration timeout) throws InterruptedException {
    long start = System.nanoTime();
    long nanos = checkTimeout(timeout);
    if (!waitFor(key, mode, start + nanos, false)) {
      throw new LockTimeoutException("timed out after " + Duration.ofNanos(System.nanoTime() - start).toMillis()
          + " ms waiting for transaction lock " + key + " (" + mode.name().toLowerCase(java.util.Locale.ROOT)
          + "); the transaction is still usable and holds what it held before");
    }
  }

  @Override
  public void lock(LockKey key, LockMode mode) throws InterruptedException {
    waitFor(key, mode, 0, true);
  }

  /**
   * Every wait goes through here, and every exit of a wait through {@link #report}: the interrupt
   * is reported (thrown, flag cleared) or left set, exactly once.
   *
   * @return true if granted, false if the deadline passed first
   */
  private boolean waitFor(LockKey key, LockMode mode, long deadline, boolean forever) throws InterruptedException {
    ServerKey k = ServerKey.of(Objects.requireNonNull(key, "key"));
    Objects.requireNonNull(mode, "mode");
    locks.ensureOpen();
    Outcome outcome;
    try {
      checkTransaction();
      if (Thread.currentThread().isInterrupted()) {
        return report(key, Outcome.CANCELLED);
      }
      NameRecorder.Wait noted = locks.waitBegins(key); // a long wait shows by name in the views
      try {
        outcome = PlatformThreadCall.run("pglock-" + locks.config().nodeName() + "-xact-wait",
            interrupted -> serverWait(key, k, mode, deadline, forever, interrupted));
      } finally {
        if (noted != null) {
          noted.end();
        }
      }
    } catch (SQLException e) {
      throw failure(key, e); // the interrupt, if any, stays set
    }
    if (outcome == Outcome.GRANTED) {
      locks.recordTransactionLockName(key);
    }
    return report(key, outcome);
  }

  /**
   * The statements of a wait, on the caller's thread or (for a virtual caller) a platform thread;
   * {@code interrupted} tells whether the caller is interrupted.
   */
  private Outcome serverWait(LockKey key, ServerKey k, LockMode mode, long deadline, boolean forever,
      BooleanSupplier interrupted) throws SQLException {
    if (tryNow(k, mode)) {
      return Outcome.GRANTED;
    }
    String previous;
    try (PreparedStatement ps = connection.prepareStatement(Sql.XACT_GET_LOCK_TIMEOUT);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      previous = rs.getString(1);
    }
    try {
      long left = forever ? 0 : (deadline - System.nanoTime() + 999_999) / 1_000_000;
      return !forever && left <= 0 ? Outcome.TIMED_OUT : waitUnderSavepoint(key, k, mode, left, interrupted);
    } finally {
      setLockTimeout(previous);
    }
  }

  /**
   * The one exit of a wait that ended without an exception, as for session locks: granted leaves
   * an interrupt set (the caller holds the lock and sees the flag); ended by the interrupt (a cancel
   * sent for it, or not started because of it) throws {@link InterruptedException} and clears the
   * flag; timed out returns false, and an interrupt that came as the timeout passed stays set.
   */
  private static boolean report(LockKey key, Outcome outcome) throws InterruptedException {
    switch (outcome) {
      case GRANTED:
        return true;
      case CANCELLED:
        Thread.interrupted();
        throw new InterruptedException("interrupted while waiting for transaction lock " + key
            + "; the transaction is still usable and holds what it held before");
      default:
        return false;
    }
  }

  private static long checkTimeout(Duration timeout) {
    if (timeout == null) {
      throw new IllegalArgumentException("timeout must not be null; use lock(name) or lock(key, mode) to wait "
          + "without limit");
    }
    return DefaultSessionLock.checkTimeout(timeout);
  }

  /** How a wait ended. */
  private enum Outcome { GRANTED, TIMED_OUT, CANCELLED }

  private boolean tryNow(ServerKey k, LockMode mode) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(Sql.xactTry(k, mode == LockMode.SHARED))) {
      bind(ps, k);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  /**
   * One wait under a savepoint; {@code millis} 0 means no limit. The canceller is armed only while
   * the wait statement runs, so a cancel can never fail the savepoint or the settings around it.
   */
  private Outcome waitUnderSavepoint(LockKey key, ServerKey k, LockMode mode, long millis,
      BooleanSupplier interrupted) throws SQLException {
    try (Statement st = connection.createStatement()) {
      st.execute(Sql.SAVEPOINT);
    }
    try {
      setLockTimeout(millis + "ms");
    } catch (SQLException e) {
      rollbackToSavepointQuietly(e);
      throw e;
    }
    SQLException failure = null;
    boolean started = false;
    boolean cancelled = false;
    try (PreparedStatement ps = connection.prepareStatement(Sql.xactLock(k, mode == LockMode.SHARED))) {
      bind(ps, k);
      // Interrupted since the first check: do not start a wait only to cancel it.
      if (!interrupted.getAsBoolean()) {
        started = true;
        StatementCanceller canceller;
        try {
          canceller = newCanceller(interrupted);
        } catch (RuntimeException e) {
          rollbackToSavepointQuietly(e);
          throw e;
        }
        try {
          ps.execute();
        } catch (SQLException e) {
          failure = e;
        } finally {
          canceller.close(); // from here on no cancel can hit the caller's next statement
          cancelled = canceller.cancelled();
        }
      }
    }
    if (started && failure == null) {
      try (Statement st = connection.createStatement()) {
        st.execute(Sql.RELEASE_SAVEPOINT);
      }
      return Outcome.GRANTED; // an interrupt that raced the grant stays set for the caller
    }
    try (Statement st = connection.createStatement()) {
      // Rolling back to the savepoint also drops the lock if it was granted as the wait ended,
      // so "not acquired" is then true on the server as well.
      st.execute(Sql.ROLLBACK_TO_SAVEPOINT);
    }
    if (!started) {
      return Outcome.CANCELLED;
    }
    String state = SqlErrors.state(failure);
    if (state.equals(SqlErrors.LOCK_NOT_AVAILABLE)) {
      return Outcome.TIMED_OUT;
    }
    if (state.equals(SqlErrors.QUERY_CANCELED) && cancelled) {
      return Outcome.CANCELLED;
    }
    if (state.equals(SqlErrors.DEADLOCK)) {
      throw new LockDeadlockException("PostgreSQL broke a deadlock by refusing transaction lock " + key
          + " to this transaction (" + SqlErrors.describe(failure) + "); the locks taken earlier in the "
          + "transaction are still held: roll back and retry, taking locks in a consistent order", failure);
    }
    throw failure;
  }

  private StatementCanceller newCanceller(BooleanSupplier interrupted) {
    try {
      return new StatementCanceller(connection, interrupted, locks.watchdog(),
          "pglock-" + locks.config().nodeName() + "-cancel");
    } catch (java.util.concurrent.RejectedExecutionException e) {
      throw new io.pglock.PgLocksClosedException("the PgLocks was closed; build a new one");
    }
  }

  /** After a failed statement under the savepoint: keep the caller's transaction usable if we can. */
  private void rollbackToSavepointQuietly(Exception cause) {
    try (Statement st = connection.createStatement()) {
      st.execute(Sql.ROLLBACK_TO_SAVEPOINT);
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  private void setLockTimeout(String value) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(Sql.XACT_SET_LOCK_TIMEOUT)) {
      ps.setString(1, value);
      ps.execute();
    }
  }

  private static void bind(PreparedStatement ps, ServerKey k) throws SQLException {
    ps.setLong(1, k.firstArg());
    if (k.objsubid() == 2) {
      ps.setInt(2, k.secondArg());
    }
  }

  private static RuntimeException failure(LockKey key, SQLException e) {
    if (SqlErrors.state(e).equals(SqlErrors.OUT_OF_SHARED_MEMORY)) {
      return new io.pglock.LockCapacityException("the server's lock table is full while locking " + key + " ("
          + SqlErrors.describe(e) + ")", e);
    }
    if (e.getSQLState() != null && e.getSQLState().equals("25P02")) {
      return new IllegalStateException("the caller's transaction is already aborted (" + SqlErrors.describe(e)
          + "); roll it back before taking locks in it", e);
    }
    return new LockSessionException("transaction lock " + key + " failed: " + SqlErrors.describe(e), e);
  }

}
