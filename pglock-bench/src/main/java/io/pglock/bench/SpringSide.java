package io.pglock.bench;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Spring Integration's LockRegistryLeaderInitiator on a JdbcLockRegistry in B8. Default: Spring's
 * defaults (lock time to live 10 s, heartbeat 500 ms, busy wait 50 ms; the registry retries a lock
 * every 100 ms). Tuned: time to live equal to pglock's bench lease; the rest stays at its defaults,
 * which already renew and poll more often than pglock. The lock is a row: a dead or paused leader's
 * row is taken over once it is older than the time to live. Standbys poll, so they are in line as
 * soon as they started; {@link Fault#TERMINATE} terminates every backend of the leader's pool.
 */
final class SpringSide implements ElectionSide {
  static final Duration DEFAULT_TTL = Duration.ofSeconds(10);
  /** Beyond this without a new leader after pg_terminate_backend, and no revocation, the leader kept its lock. */
  static final Duration TERMINATE_WINDOW = Duration.ofSeconds(3);
  private final Db db;
  private final SpringLockTable table;
  private final Duration ttl;

  /**
   * @param ttl the lock's time to live, or null for Spring's default
   */
  SpringSide(Db db, SpringLockTable table, Duration ttl) {
    this.db = db;
    this.table = table;
    this.ttl = ttl;
  }

  Duration ttl() {
    return ttl == null ? DEFAULT_TTL : ttl;
  }

  @Override
  public String system() {
    return "Spring LockRegistryLeaderInitiator";
  }

  @Override
  public String setting() {
    return (ttl == null ? "default" : "tuned") + ", TTL " + ttl().toSeconds() + " s";
  }

  @Override
  public String settings() {
    return (ttl == null ? "Spring Integration 6.5 defaults: DefaultLockRepository time to live 10 s"
        : "DefaultLockRepository time to live " + ttl.toMillis() + " ms (pglock's lease)")
        + ", heartbeat 500 ms, busy wait 50 ms, JdbcLockRegistry idleBetweenTries 100 ms (defaults); "
        + "HikariCP pool of 2 per contender; table " + table.prefix() + "LOCK";
  }

  @Override
  public List<String> contenderArgs(String election, String node) {
    List<String> a = new ArrayList<>(ElectionSide.dbArgs(db));
    a.addAll(List.of("system=spring", "node=" + node, "election=" + election, "appName=" + node,
        "prefix=" + table.prefix()));
    if (ttl != null) {
      a.add("ttlMs=" + ttl.toMillis());
    }
    return a;
  }

  @Override
  public String notApplicable(Fault fault) {
    return null;
  }

  @Override
  public Duration expected(Fault fault) {
    return fault == Fault.SIGKILL || fault == Fault.PAUSE ? ttl() : Duration.ZERO;
  }

  @Override
  public Duration timeout(Fault fault) {
    return fault == Fault.TERMINATE ? TERMINATE_WINDOW : ElectionSide.super.timeout(fault);
  }

  @Override
  public boolean standbysInLine(Fleet fleet, Connection monitor) {
    return true; // a started initiator tries the lock every 100 ms: no queue to join
  }

  @Override
  public List<Integer> backendsToTerminate(Contender leader, Connection monitor) throws java.sql.SQLException {
    return ElectionSide.pids(monitor, "SELECT pid FROM pg_stat_activity WHERE application_name = ?", leader.node);
  }
}
