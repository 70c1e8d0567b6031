package io.pglock.internal;

import io.pglock.LockDeadlockException;
import io.pglock.LockKey;
import io.pglock.LockMode;
import io.pglock.LockSessionException;
import io.pglock.LockTimeoutException;
import io.pglock.TransactionLocks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * Transaction-scoped locks on the caller's connection. A wait is one blocking statement under a
 * savepoint, bounded by {@code lock_timeout}, so that a timeout or deadlock rolls back only the
 * savepoint, never the caller's transaction. It is one statement, not a series of short ones,
 * because PostgreSQL looks for deadlocks only after a wait has lasted {@code deadlock_timeout}. An
 * interrupt is turned into a cancel by a {@link StatementCanceller}.
 */
final class DefaultTransactionLocks implements TransactionLocks {

  private final DefaultPgLocks locks;
  private final Connection connection;

  DefaultTransactionLocks(DefaultPgLocks locks, Connection connection) {
    this.locks = locks;
    this.connection = java.util.Objects.requireNonNull(connection, "connection");
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
  public boolean tryLock(LockKey key, LockMode mode) {
    ServerKey k = ServerKey.of(java.util.Objects.requireNonNull(key, "key"));
    locks.ensureOpen();
    try {
      checkTransaction();
      try (PreparedStatement ps = connection.prepareStatement(Sql.xactTry(k, mode == LockMode.SHARED))) {
        bind(ps, k);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getBoolean(1);
        }
      }
    } catch (SQLException e) {
      throw failure(key, e);
    }
  }

  @Override
  public void lock(String name, Duration timeout) throws InterruptedException {
    lock(locks.key(name), LockMode.EXCLUSIVE, timeout);
  }

  @Override
  public void lock(LockKey key, LockMode mode, Duration timeout) throws InterruptedException {
    long nanos = DefaultSessionLock.checkTimeout(timeout);
    if (!waitFor(key, mode, System.nanoTime() + nanos, false)) {
      throw new LockTimeoutException("timed out after " + timeout.toMillis() + " ms waiting for transaction "
          + "lock " + key + " (" + mode.name().toLowerCase(java.util.Locale.ROOT) + "); the transaction is "
          + "still usable and holds what it held before");
    }
  }

  @Override
  public void lock(LockKey key, LockMode mode) throws InterruptedException {
    waitFor(key, mode, 0, true);
  }

  private boolean waitFor(LockKey key, LockMode mode, long deadline, boolean forever) throws InterruptedException {
    ServerKey k = ServerKey.of(java.util.Objects.requireNonNull(key, "key"));
    locks.ensureOpen();
    try {
      checkTransaction();
      if (Thread.interrupted()) {
        throw new InterruptedException("interrupted before waiting for transaction lock " + key);
      }
      if (tryLock(key, mode)) {
        return true;
      }
      String previous;
      try (PreparedStatement ps = connection.prepareStatement(Sql.XACT_GET_LOCK_TIMEOUT);
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        previous = rs.getString(1);
      }
      try {
        long left = forever ? 0 : (deadline - System.nanoTime() + 999_999) / 1_000_000;
        if (!forever && left <= 0) {
          return false;
        }
        return waitUnderSavepoint(key, k, mode, left);
      } finally {
        setLockTimeout(previous);
      }
    } catch (SQLException e) {
      throw failure(key, e);
    }
  }

  /** One wait under a savepoint; {@code millis} 0 means no limit. @return true if granted */
  private boolean waitUnderSavepoint(LockKey key, ServerKey k, LockMode mode, long millis)
      throws SQLException, InterruptedException {
    StatementCanceller canceller;
    try {
      canceller = new StatementCanceller(connection, Thread.currentThread(), locks.watchdog(),
          "pglock-" + locks.config().nodeName() + "-cancel");
    } catch (java.util.concurrent.RejectedExecutionException e) {
      throw new io.pglock.PgLocksClosedException("the PgLocks was closed; build a new one");
    }
    try (Statement st = connection.createStatement()) {
      st.execute(Sql.SAVEPOINT);
      setLockTimeout(millis + "ms");
    } catch (SQLException | RuntimeException e) {
      canceller.close();
      throw e;
    }
    SQLException failure = null;
    boolean cancelled;
    try (PreparedStatement ps = connection.prepareStatement(Sql.xactLock(k, mode == LockMode.SHARED))) {
      bind(ps, k);
      ps.execute();
    } catch (SQLException e) {
      failure = e;
    } finally {
      canceller.close(); // from here on no cancel can hit the caller's next statement
      cancelled = canceller.cancelled();
    }
    if (failure == null) {
      try (Statement st = connection.createStatement()) {
        st.execute(Sql.RELEASE_SAVEPOINT);
      }
      return true; // granted; an interrupt that raced the grant stays set for the caller
    }
    String state = SqlErrors.state(failure);
    try (Statement st = connection.createStatement()) {
      // Rolling back to the savepoint also drops the lock if it was granted as the wait ended,
      // so "not acquired" is then true on the server as well.
      st.execute(Sql.ROLLBACK_TO_SAVEPOINT);
    }
    if (state.equals(SqlErrors.LOCK_NOT_AVAILABLE)) {
      return false;
    }
    if (state.equals(SqlErrors.QUERY_CANCELED) && cancelled) {
      Thread.interrupted();
      throw new InterruptedException("interrupted while waiting for transaction lock " + key);
    }
    if (state.equals(SqlErrors.DEADLOCK)) {
      throw new LockDeadlockException("PostgreSQL broke a deadlock by refusing transaction lock " + key
          + " to this transaction (" + SqlErrors.describe(failure) + "); the locks taken earlier in the "
          + "transaction are still held: roll back and retry, taking locks in a consistent order", failure);
    }
    throw failure;
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
