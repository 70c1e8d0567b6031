package io.pglock.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * pglock in B8: each contender a {@code PgLocks} with the bench lease, joined to a
 * {@code LeaderElection} with default settings. Standbys are in line when the server shows each one's
 * waiting advisory lock; {@link Fault#TERMINATE} terminates the backend that holds the election's
 * lock (the leader's lock session), found by the leader's node name in {@code application_name}.
 */
final class PglockSide implements ElectionSide {
  static final String NAMESPACE = "pglock-bench-b8";
  private final Db db;
  private final Duration lease;

  PglockSide(Db db, Duration lease) {
    this.db = db;
    this.lease = lease;
  }

  Duration lease() {
    return lease;
  }

  @Override
  public String system() {
    return "pglock";
  }

  @Override
  public String setting() {
    return "lease " + lease.toSeconds() + " s";
  }

  @Override
  public String settings() {
    return "PgLocks lease " + lease.toMillis() + " ms (heartbeat and wait chunks every lease/3), "
        + "LeaderElection defaults (first-attempt jitter up to 50 ms)";
  }

  @Override
  public List<String> contenderArgs(String election, String node) {
    List<String> a = new ArrayList<>(ElectionSide.dbArgs(db));
    a.addAll(List.of("system=pglock", "node=" + node, "election=" + election, "namespace=" + NAMESPACE,
        "leaseMs=" + lease.toMillis()));
    return a;
  }

  @Override
  public String notApplicable(Fault fault) {
    return null;
  }

  @Override
  public Duration expected(Fault fault) {
    // a paused leader's lock is freed when the server ends its idle session, at the lease
    return fault == Fault.PAUSE ? lease : Duration.ZERO;
  }

  @Override
  public boolean standbysInLine(Fleet fleet, Connection monitor) throws SQLException {
    try (PreparedStatement ps = monitor.prepareStatement("""
        SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND NOT l.granted AND a.application_name LIKE ?""")) {
      ps.setString(1, "pglock:" + fleet.nodePrefix + "%");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1) >= fleet.standbys().size();
      }
    }
  }

  @Override
  public List<Integer> backendsToTerminate(Contender leader, Connection monitor) throws SQLException {
    return ElectionSide.pids(monitor, """
        SELECT DISTINCT a.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND a.application_name LIKE ?""",
        "pglock:" + leader.node + ":%");
  }
}
