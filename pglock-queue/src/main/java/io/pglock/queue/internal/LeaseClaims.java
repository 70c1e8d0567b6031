package io.pglock.queue.internal;

import io.pglock.queue.WorkerConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The lease mode, for transaction-mode poolers: every round trip borrows a connection of the data
 * source for one statement (no session state), and a running job is the worker's while its
 * {@code lease_until} lies ahead; heartbeats push it on.
 *
 * <p>The worker counts a job as owned until the send time of the last statement that set its lease
 * (its claim or a heartbeat) plus the lease, less a tenth: the server's clock starts the lease no
 * earlier than that send time.
 */
final class LeaseClaims extends StatementClaims {
  private static final String EXPIRED = "the job's lease ran out (its worker stopped heartbeating); found by ";

  private final DataSource dataSource;
  private final int networkTimeoutMillis;
  private final long leaseMillis;
  private final long validNanos;
  private final long owner;
  /** Per running job: the send time of the last statement that set its lease (claim or heartbeat). */
  private final java.util.Map<Long, Long> renewed = new java.util.concurrent.ConcurrentHashMap<>();

  LeaseClaims(DefaultJobQueue jobs, WorkerConfig config) {
    super(jobs, config);
    this.dataSource = jobs.dataSource();
    this.networkTimeoutMillis = (int) jobs.networkTimeout().toMillis();
    this.leaseMillis = config.lease().toMillis();
    this.validNanos = config.lease().toNanos() - config.lease().toNanos() / 10;
    this.owner = UUID.randomUUID().getMostSignificantBits() | 1;
  }

  private <T> T call(ShortCall.Work<T> work) throws SQLException {
    return ShortCall.run(dataSource, networkTimeoutMillis, work);
  }

  @Override
  public void open() {}

  @Override
  public boolean needsOpen() {
    return false;
  }

  @Override
  public boolean owns(RunningJob job) {
    Long sent = renewed.get(job.id());
    return sent != null && job.owner() == owner && System.nanoTime() - sent < validNanos;
  }

  @Override
  public int reconcile(List<RunningJob> running) {
    return 0; // no lock lives on a connection in this mode
  }

  @Override
  public long untilHeartbeatNanos(boolean anyRunning) {
    long oldest = Long.MAX_VALUE;
    long now = System.nanoTime();
    for (Long sent : renewed.values()) {
      oldest = Math.min(oldest, sent - now);
    }
    return oldest == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, oldest + config.lease().toNanos() / 3);
  }

  @Override
  public List<Claimed> completeAndClaim(List<Outcome> outcomes, int limit, Collection<Long> heldSlots)
      throws SQLException {
    long sent = System.nanoTime();
    List<Claimed> claimed = call(c -> {
      if (limit == 0) {
        try (PreparedStatement ps = c.prepareStatement(DURABLE + sql.completeLease)) {
          bindOutcomes(c, ps, 1, outcomes);
          queryDurable(ps).close();
        }
        return List.of();
      }
      // with outcomes: both statements in one round trip (one Sync, so one transaction: nothing here
      // takes a lock that could outlive a failure)
      boolean both = !outcomes.isEmpty();
      String claim = JobSql.limited(sql.claimLease, limit, limit);
      try (PreparedStatement ps = c.prepareStatement(DURABLE + (both ? sql.completeLease + ";\n" + claim : claim))) {
        int i = both ? bindOutcomes(c, ps, 1, outcomes) : 1;
        i = bindCandidates(c, ps, i);
        i = bindClaimed(c, ps, i, owner);
        ps.setLong(i, leaseMillis);
        if (both) {
          executeDurable(ps); // then the outcomes' count
          if (!ps.getMoreResults()) {
            throw new SQLException("the claim after the outcomes returned no rows");
          }
          try (ResultSet rs = ps.getResultSet()) {
            return readClaimed(rs, owner);
          }
        }
        try (ResultSet rs = queryDurable(ps)) {
          return readClaimed(rs, owner);
        }
      }
    });
    for (Outcome o : outcomes) {
      renewed.remove(o.id());
    }
    for (Claimed c : claimed) {
      renewed.put(c.id(), sent); // its lease runs from the claim, which was sent no earlier than this
    }
    return claimed;
  }

  @Override
  public Heartbeat heartbeat(Collection<Long> running) throws SQLException {
    renewed.keySet().retainAll(running); // jobs whose outcome was dropped
    if (running.isEmpty()) {
      return new Heartbeat(List.of(), List.of());
    }
    long sent = System.nanoTime();
    Set<Long> kept = new HashSet<>();
    List<Long> cancelled = new ArrayList<>();
    call(c -> {
      try (PreparedStatement ps = c.prepareStatement(DURABLE + sql.heartbeatLease)) {
        ps.setLong(1, leaseMillis);
        ps.setArray(2, c.createArrayOf("int8", ids(running)));
        ps.setLong(3, owner);
        try (ResultSet rs = queryDurable(ps)) {
          while (rs.next()) {
            kept.add(rs.getLong(1));
            if (rs.getBoolean(2)) {
              cancelled.add(rs.getLong(1));
            }
          }
        }
      }
      return null;
    });
    List<Long> lost = new ArrayList<>();
    for (Long id : running) {
      if (kept.contains(id)) {
        renewed.put(id, sent);
      } else {
        renewed.remove(id);
        lost.add(id);
      }
    }
    return new Heartbeat(cancelled, lost);
  }

  @Override
  public int rescue() throws SQLException {
    return call(c -> {
      try (PreparedStatement ps = c.prepareStatement(DURABLE + sql.rescueLease)) {
        ps.setString(1, config.queue());
        bindBack(c, ps, 2, EXPIRED);
        try (ResultSet rs = queryDurable(ps)) {
          return rs.next() ? rs.getInt(1) : 0;
        }
      }
    });
  }

  @Override
  public int prune(int batch) throws SQLException {
    return call(c -> prune(c, batch));
  }

  @Override
  public boolean connectionLost(SQLException e) {
    return false; // nothing lives on a connection in this mode
  }

  @Override
  public void close() {}
}
