package io.pglock.internal;

import io.pglock.LockSessionException;
import io.pglock.PgLocksConfig;
import io.pglock.ServerInRecoveryException;
import io.pglock.UnsupportedDatabaseException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.postgresql.PGConnection;

/**
 * Opens a connection for a lock session, checks the database and sets the session's timers. Public
 * (with {@link #checkPostgres}) only for {@code io.pglock.internal.schema}; not API.
 */
public final class SessionSetup {
  private SessionSetup() {}

  static final int MIN_SERVER_VERSION = 140000;

  record Opened(BorrowedConnection connection, int pid, java.time.Instant backendStart, Lease lease) {}

  /**
   * Opens and sets up a connection. The connection may come from a pool: everything changed here is
   * put back when the session ends in order ({@link BorrowedConnection}).
   *
   * @throws UnsupportedDatabaseException if the database is not PostgreSQL 14+ reached directly
   * @throws LockSessionException if the connection fails
   */
  static Opened open(PgLocksConfig config, String applicationName) {
    Connection c = connect(config);
    BorrowedConnection borrowed;
    try {
      checkPostgres(c);
      borrowed = BorrowedConnection.of(c);
    } catch (SQLException e) {
      BorrowedConnection.closeUnchanged(c);
      throw new LockSessionException("could not set up a lock session: " + SqlErrors.describe(e), e);
    } catch (RuntimeException e) {
      BorrowedConnection.closeUnchanged(c);
      throw e;
    }
    try {
      return setUp(config, applicationName, borrowed);
    } catch (SQLException e) {
      borrowed.discard();
      throw new LockSessionException("could not set up a lock session: " + SqlErrors.describe(e), e);
    } catch (RuntimeException e) {
      borrowed.discard(); // settings may be half changed: never give such a connection back to a pool
      throw e;
    }
  }

  /**
   * Checks, on one connection given back unchanged, that the DataSource reaches PostgreSQL 14 or
   * newer through pgjdbc: what an instance for transaction locks alone needs.
   *
   * @return whether the schema records lock names
   */
  static Boolean checkOnly(PgLocksConfig config) {
    Connection c = connect(config);
    try {
      checkPostgres(c);
      try (PreparedStatement ps = c.prepareStatement(Sql.NAMES_INSTALLED)) {
        ps.setString(1, config.schema());
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getBoolean(1);
        }
      }
    } catch (SQLException e) {
      throw new LockSessionException("could not check the database: " + SqlErrors.describe(e), e);
    } finally {
      BorrowedConnection.closeUnchanged(c);
    }
  }

  private static Connection connect(PgLocksConfig config) {
    try {
      return config.dataSource().getConnection();
    } catch (SQLException e) {
      if (SqlErrors.state(e).equals(SqlErrors.INSUFFICIENT_PRIVILEGE)) {
        throw new io.pglock.MissingPrivilegeException("the database role may not connect (" + SqlErrors.describe(e)
            + "); pglock's locks need only CONNECT: as an administrator run GRANT CONNECT ON DATABASE <db> "
            + "TO <role>", e);
      }
      throw new LockSessionException("could not open a lock session (" + SqlErrors.describe(e)
          + "); check the DataSource's URL, credentials and that PostgreSQL is running (with a pool: that "
          + "it has a connection to spare for each lock and wait session)", e);
    }
  }

  private static Opened setUp(PgLocksConfig config, String applicationName, BorrowedConnection borrowed)
      throws SQLException {
    Connection c = borrowed.connection;
    if (borrowed.autoCommitWasOff()) {
      c.setAutoCommit(true); // session locks must not sit inside an open transaction
    }
    Duration lease = config.lease();
    long leaseMs = lease.toMillis();
    // Keepalive detection (idle + count * interval, whole seconds) must not end the session
    // before the lease, or the server could free the locks before the client's deadline.
    long idleS = (leaseMs + 1999) / 2000;
    long intervalS = Math.max(1, (leaseMs - idleS * 1000 + 2999) / 3000);
    String[] values = {
        applicationName,                                           // application_name
        leaseMs + "ms",                                            // idle_session_timeout
        idleS + "s",                                               // tcp_keepalives_idle
        intervalS + "s",                                           // tcp_keepalives_interval
        "3",                                                       // tcp_keepalives_count
        leaseMs + "ms",                                            // tcp_user_timeout
        Math.min(1000, Math.max(100, leaseMs / 3)) + "ms",         // client_connection_check_interval
        "0",                                                       // statement_timeout
        "0",                                                       // lock_timeout
        "off",                                                     // synchronous_commit (fencing tokens)
        "read committed",                                          // default_transaction_isolation
        "off"};                                                    // default_transaction_read_only
    // Behind a transaction-mode pooler the backend changes between statements: look before changing
    // anything, as the settings would otherwise stay on a backend that serves other clients next.
    int pid = backendPid(c);
    checkPinned(c, pid);
    long sent = System.nanoTime();
    int setupPid;
    java.time.Instant backendStart;
    try (PreparedStatement ps = c.prepareStatement(Sql.SETUP)) {
      for (int i = 0; i < values.length; i++) {
        ps.setString(i + 1, values[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        borrowed.remember(rs);
        setupPid = rs.getInt(Sql.SETUP_PID_COLUMN);
        backendStart = rs.getTimestamp(Sql.SETUP_PID_COLUMN + 3).toInstant();
      }
    }
    if (setupPid != pid) {
      borrowed.restoreSettingsQuietly();
      throw new UnsupportedDatabaseException(poolerRefusal("consecutive statements ran on different backends "
          + "(pid " + pid + " then " + setupPid + ")"));
    }
    sent = awaitQuarantine(config, c, sent);
    // A stalled socket must not outlive the lease by much: the lease check marks the locks lost at
    // the deadline, and the network timeout frees the loop thread soon after.
    c.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, leaseMs + 5_000));
    return new Opened(borrowed, pid, backendStart, new Lease(lease, sent));
  }

  /**
   * On a server that became primary less than a lease ago (a failover), waits until a lease has
   * passed, so that no lock is granted here while a holder on the old primary may still believe it
   * holds it (see {@code V14__failover_quarantine.sql}). Runs after the setup (a role's read-only
   * default is off by then), before the session takes any lock; while it waits, a statement every
   * third of the lease keeps the server's idle timeout away. A wait longer than what the connect
   * timeout leaves is not made: the open fails at once, saying when locks can be had again.
   *
   * @param sent when the setup's statement was sent
   * @return when the last statement that succeeded was sent: where the session's lease starts
   * @throws LockSessionException if the wait is longer than the connect timeout allows
   */
  private static long awaitQuarantine(PgLocksConfig config, Connection c, long sent) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(Sql.QUARANTINE_INSTALLED)) {
      ps.setString(1, config.schema());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (!rs.getBoolean(1)) {
          return sent; // a schema older than version 14, or none: no quarantine (docs/failover.md)
        }
      }
    }
    long waitMs;
    try (PreparedStatement ps = c.prepareStatement(Sql.quarantine(config.schema()))) {
      ps.setString(1, config.lease().toMillis() + " milliseconds");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        waitMs = rs.getLong(1);
      }
    }
    if (waitMs <= 0) {
      return sent;
    }
    // Leave a second of the connect timeout for the caller.
    if (waitMs > config.connectTimeout().toMillis() - 1000) {
      throw new LockSessionException("this server became primary less than a lease ago (a failover): locks are "
          + "granted here again in " + waitMs + " ms, once every holder on the former primary has seen its lease run "
          + "out (see docs/failover.md); try again then", null);
    }
    long until = System.nanoTime() + waitMs * 1_000_000L;
    long step = Math.max(1, config.lease().toNanos() / 3);
    try {
      long left;
      while ((left = until - System.nanoTime()) > 0) {
        java.util.concurrent.TimeUnit.NANOSECONDS.sleep(Math.min(left, step));
        sent = System.nanoTime();
        backendPid(c); // keeps the session from the server's idle timeout
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LockSessionException("interrupted while waiting out the lease after a failover", e);
    }
    return sent;
  }

  /**
   * Refuses anything but PostgreSQL 14 or newer through pgjdbc, and a server in recovery.
   *
   * <p>One look per connection is enough for recovery: a server leaves recovery only by promotion,
   * and a primary never enters it without a restart, which ends every connection.
   *
   * @throws UnsupportedDatabaseException if it is not PostgreSQL 14+ through pgjdbc
   * @throws ServerInRecoveryException if the server is a standby
   */
  public static void checkPostgres(Connection c) throws SQLException {
    String product = c.getMetaData().getDatabaseProductName();
    if (!"PostgreSQL".equals(product) || !c.isWrapperFor(PGConnection.class)) {
      throw new UnsupportedDatabaseException("pglock needs PostgreSQL through the pgjdbc driver, but the "
          + "DataSource connects to " + product + " (" + c.getMetaData().getURL() + ")");
    }
    try (PreparedStatement ps = c.prepareStatement(Sql.SERVER_VERSION); ResultSet rs = ps.executeQuery()) {
      rs.next();
      int version = rs.getInt(1);
      if (version < MIN_SERVER_VERSION) {
        throw new UnsupportedDatabaseException("pglock needs PostgreSQL 14 or newer (for idle_session_timeout "
            + "and client_connection_check_interval); this server is " + version);
      }
      if (rs.getBoolean(2)) {
        throw new ServerInRecoveryException(inRecovery(c));
      }
    }
  }

  /** The refusal of a standby, with the server it reached and the fix. */
  static String inRecovery(Connection c) throws SQLException {
    return "the DataSource reached a PostgreSQL server in recovery (a standby: " + c.getMetaData().getURL()
        + "), where advisory locks exclude nobody on the primary and nothing can be written; point it at the "
        + "primary: with a standby that may be promoted, use pgjdbc's multi-host URL with targetServerType=primary, "
        + "e.g. jdbc:postgresql://host1:5432,host2:5432/db?targetServerType=primary&hostRecheckSeconds=2 "
        + "(see docs/failover.md)";
  }

  /**
   * Refuses a connection whose statements do not all run on one backend: a pooler in transaction
   * or statement mode (PgBouncer) would share session locks with other clients silently.
   */
  private static void checkPinned(Connection c, int pid) throws SQLException {
    for (int i = 0; i < 2; i++) {
      int now = backendPid(c);
      if (now != pid) {
        throw new UnsupportedDatabaseException(poolerRefusal("consecutive statements ran on different backends "
            + "(pid " + pid + " then " + now + ")"));
      }
    }
  }

  private static int backendPid(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(Sql.BACKEND_PID); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** The refusal of session locks behind a transaction-mode pooler, with what gave it away and the fixes. */
  static String poolerRefusal(String evidence) {
    return "session locks refused: " + evidence + ", so a pooler in transaction mode (such as PgBouncer) sits "
        + "between pglock and PostgreSQL and would hand pglock's session locks to other clients. Point the "
        + "DataSource at PostgreSQL directly (or at a session-mode pool), or, for transaction-scoped locks "
        + "(PgLocks.inTransaction) alone, which are safe through such a pooler, build with "
        + "PgLocksBuilder.transactionLocksOnly().";
  }

  /**
   * Probes the server once per {@code PgLocks}, on a second connection, and returns the size of its
   * lock table.
   *
   * <p>It also detects a transaction-mode pooler that a single connection cannot see: while the
   * lock session is idle between statements, a second client of the same pooler in a transaction
   * gets the same server connection (poolers hand out the most recently released one first), so it
   * reports the same backend pid. Directly connected, two connections are always two backends.
   *
   * @return about how many locks the server's shared lock table holds, and whether the schema has
   *     the fencing functions
   * @throws UnsupportedDatabaseException if the second connection reports the session's pid
   */
  static Probe probe(PgLocksConfig config, int sessionPid) {
    try (Connection probe = config.dataSource().getConnection()) {
      boolean autoCommit = probe.getAutoCommit();
      probe.setAutoCommit(false);
      try {
        return probe(probe, sessionPid, config.schema());
      } finally {
        probe.rollback();
        probe.setAutoCommit(autoCommit); // a pooled connection goes back as it came
      }
    } catch (SQLException e) {
      throw new LockSessionException("could not probe the server: " + SqlErrors.describe(e), e);
    }
  }

  /** What the probe learnt: the size of the server's lock table, and whether fencing is installed. */
  record Probe(int lockTable, boolean fencingInstalled, boolean namesInstalled, boolean historyInstalled) {}

  private static Probe probe(Connection probe, int sessionPid, String schema) throws SQLException {
    try (PreparedStatement ps = probe.prepareStatement(Sql.PROBE)) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        int pid = rs.getInt(1);
        checkNotShared(pid, sessionPid);
        return new Probe(rs.getInt(2), rs.getBoolean(3), rs.getBoolean(4), rs.getBoolean(5));
      }
    }
  }

  private static void checkNotShared(int pid, int sessionPid) {
    if (pid == sessionPid) {
      throw new UnsupportedDatabaseException(poolerRefusal("two connections from the DataSource share backend "
          + "pid " + pid));
    }
  }
}
