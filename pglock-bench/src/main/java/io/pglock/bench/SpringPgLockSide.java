package io.pglock.bench;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Spring Integration's LockRegistryLeaderInitiator, at Spring's defaults (heartbeat 500 ms, busy
 * wait 50 ms), on pglock's {@code PgLockRegistry}: the one-bean switch from {@code JdbcLockRegistry}.
 * Each contender builds a {@code PgLocks} with the bench lease on a HikariCP pool of 3 (the lock
 * session and pglock's two wait sessions). The lock is an advisory lock of the leader's session: the
 * server frees it when that session ends (SIGKILL, pg_terminate_backend, or the lease's
 * {@code idle_session_timeout} for a paused leader) and wakes a standby waiting in its
 * {@code tryLock(heartbeat)}. Standbys are in line when the server shows each one's waiting advisory
 * lock (between two tries a standby is briefly not waiting); {@link Fault#TERMINATE} terminates every
 * backend of the leader's node: its pglock sessions and its pool's idle connections.
 */
final class SpringPgLockSide implements ElectionSide {
  static final String NAMESPACE = "pglock-bench-b8-spring";
  private final Db db;
  private final Duration lease;

  SpringPgLockSide(Db db, Duration lease) {
    this.db = db;
    this.lease = lease;
  }

  @Override
  public String system() {
    return "Spring initiator on PgLockRegistry";
  }

  @Override
  public String setting() {
    return "default, lease " + lease.toSeconds() + " s";
  }

  @Override
  public String settings() {
    return "LockRegistryLeaderInitiator defaults (heartbeat 500 ms, busy wait 50 ms) on new PgLockRegistry(pgLocks), "
        + "PgLocks lease " + lease.toMillis() + " ms (pglock's row), pglock's defaults otherwise; HikariCP pool of 3 "
        + "per contender (lock session + 2 wait sessions); a revoked leader stands again (PgLockRegistry's reentrant "
        + "tryLock answers false once the hold is lost), so it is not replaced after pg_terminate_backend or SIGSTOP";
  }

  @Override
  public List<String> contenderArgs(String election, String node) {
    List<String> a = new ArrayList<>(ElectionSide.dbArgs(db));
    a.addAll(List.of("system=spring", "registry=pglock", "node=" + node, "election=" + election, "appName=" + node,
        "namespace=" + NAMESPACE, "leaseMs=" + lease.toMillis()));
    return a;
  }

  @Override
  public String notApplicable(Fault fault) {
    return null;
  }

  @Override
  public Duration expected(Fault fault) {
    // as pglock's own row: a paused leader's lock is freed when the server ends its idle session
    return fault == Fault.PAUSE ? lease : Duration.ZERO;
  }

  @Override
  public boolean standbysInLine(Fleet fleet, Connection monitor) throws SQLException {
    return ElectionSide.pids(monitor, """
        SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND NOT l.granted AND a.application_name LIKE ?""",
        "pglock:" + fleet.nodePrefix + "%").size() >= fleet.standbys().size();
  }

  @Override
  public List<Integer> backendsToTerminate(Contender leader, Connection monitor) throws SQLException {
    List<Integer> pids = ElectionSide.pids(monitor, "SELECT pid FROM pg_stat_activity WHERE application_name = ?",
        leader.node);
    pids.addAll(ElectionSide.pids(monitor, "SELECT pid FROM pg_stat_activity WHERE application_name LIKE ?",
        "pglock:" + leader.node + ":%"));
    return pids;
  }
}
