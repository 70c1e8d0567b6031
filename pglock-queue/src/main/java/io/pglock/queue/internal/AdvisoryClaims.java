package io.pglock.queue.internal;

import io.pglock.LeasedSession;
import io.pglock.queue.WorkerConfig;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The advisory mode: one leased session per worker (a connection set up like pglock's lock sessions)
 * holds the advisory lock of every job the worker runs; the outcome's statement releases it.
 *
 * <p>The owner written into a claimed row is a random number drawn per session, whose presence lock
 * the session holds for its life: a rescue tries that lock once per owner to learn whether it is
 * gone, and skips its own session's rows (an advisory lock is re-entrant: its own try would succeed).
 */
final class AdvisoryClaims extends StatementClaims {
  private static final SecureRandom RANDOM = new SecureRandom();
  /** For benchmarks only: claim without row locks, as the classic advisory-lock queue does. */
  private static final boolean ADVISORY_ONLY = Boolean.getBoolean("pglock.queue.advisoryOnlyClaims");
  private static final String LOST = "the worker's connection ended while the job ran; found free by ";

  private final DefaultJobQueue jobs;
  private final boolean keyed;
  private final long slotBase;
  private final long presenceBase;
  private volatile LeasedSession session;
  /** Read by handler threads (through {@link RunningJob#isOwned()}), written by the I/O thread. */
  private volatile long owner;
  /** The rescue's cursor: it looks at running rows with a larger id next (0: from the start). */
  private long rescueAfter;

  AdvisoryClaims(DefaultJobQueue jobs, WorkerConfig config) {
    super(jobs, config);
    this.jobs = jobs;
    this.keyed = config.concurrencyPerKey() > 0;
    this.slotBase = DefaultJobQueue.slotBase(jobs.locks().config().schema());
    this.presenceBase = DefaultJobQueue.presenceBase(jobs.locks().config().schema());
  }

  @Override
  public boolean needsOpen() {
    LeasedSession s = session;
    return s == null || s.lossCause() != null;
  }

  @Override
  public void open() throws SQLException {
    if (!needsOpen()) {
      return;
    }
    close();
    LeasedSession opened = jobs.locks().leasedSession("jobs");
    try {
      // the presence lock, held for the session's life: others learn from it that this owner lives
      long drawn = 0;
      for (int tries = 0; tries < 5 && drawn == 0; tries++) {
        long candidate = RANDOM.nextLong() | 1; // never 0, never the null of a row without owner
        boolean got = opened.call(c -> {
          try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
            ps.setLong(1, presenceBase ^ candidate);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getBoolean(1);
            }
          }
        });
        drawn = got ? candidate : 0;
      }
      if (drawn == 0) {
        throw new SQLException("no free presence key after 5 random draws");
      }
      owner = drawn;
      session = opened;
    } catch (SQLException | RuntimeException e) {
      opened.close();
      throw e;
    }
  }

  @Override
  public boolean owns(RunningJob job) {
    LeasedSession s = session;
    return s != null && job.owner() == owner && s.leaseValid();
  }

  @Override
  public int reconcile(List<RunningJob> running) throws SQLException {
    java.util.Set<Long> owned = new java.util.HashSet<>();
    owned.add(presenceBase ^ owner);
    for (RunningJob job : running) {
      if (job.owner() == owner) {
        owned.add(keyBase ^ job.id());
        if (job.slotKey() != null) {
          owned.add(job.slotKey());
        }
      }
    }
    // Off the hot path (after a failure only): the session's own advisory locks, from pg_locks.
    return session.call(c -> {
      List<Long> extra = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement("SELECT (classid::bigint << 32) | objid::bigint FROM pg_locks"
          + " WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = 1 AND granted");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          if (!owned.contains(rs.getLong(1))) {
            extra.add(rs.getLong(1));
          }
        }
      }
      if (extra.isEmpty()) {
        return 0;
      }
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_unlock(?)")) {
        for (Long key : extra) {
          // a lock taken twice (re-entrant) is held until unlocked twice
          for (int times = 0; times < 1000; times++) {
            ps.setLong(1, key);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              if (!rs.getBoolean(1)) {
                break;
              }
            }
          }
        }
      }
      return extra.size();
    });
  }

  @Override
  public long untilHeartbeatNanos(boolean anyRunning) {
    LeasedSession s = session;
    // the session is idle-terminated after the lease even without jobs: keep it alive either way
    return s == null ? Long.MAX_VALUE : s.untilHeartbeat().toNanos();
  }

  @Override
  public List<Claimed> completeAndClaim(List<Outcome> outcomes, int limit, Collection<Long> heldSlots)
      throws SQLException {
    // keyed and advisory-only claims read past the head of the queue: jobs of a key at its limit, or
    // candidates other workers hold, must not hide the rest
    String claim = keyed ? JobSql.limited(sql.claimAdvisoryKeyed, limit * 4 + 16, limit)
        : ADVISORY_ONLY ? JobSql.limited(sql.claimAdvisoryOnly, limit * 4 + 16, limit)
        : JobSql.limited(sql.claimAdvisory, limit, limit);
    return session.call(c -> {
      if (limit == 0) {
        complete(c, outcomes);
        return List.of();
      }
      if (outcomes.isEmpty()) {
        try (PreparedStatement ps = c.prepareStatement(DURABLE + claim)) {
          bindClaim(c, ps, 1, limit, heldSlots);
          try (ResultSet rs = queryDurable(ps)) {
            return readClaimed(rs, owner);
          }
        }
      }
      // One round trip for both: pgjdbc sends the two statements with one Sync, so they run as one
      // implicit transaction. Should the claim fail, the outcomes roll back with it while their unlocks
      // (not transactional) stand: those jobs are found free and run again: at least once, never twice
      // at a time.
      try (PreparedStatement ps = c.prepareStatement(DURABLE + sql.completeAdvisory + ";\n" + claim)) {
        int i = bindCompletion(c, ps, outcomes);
        bindClaim(c, ps, i, limit, heldSlots);
        executeDurable(ps); // then the outcomes' counts
        if (!ps.getMoreResults()) {
          throw new SQLException("the claim after the outcomes returned no rows");
        }
        try (ResultSet rs = ps.getResultSet()) {
          return readClaimed(rs, owner);
        }
      }
    });
  }

  private void complete(Connection c, List<Outcome> outcomes) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(DURABLE + sql.completeAdvisory)) {
      bindCompletion(c, ps, outcomes);
      queryDurable(ps).close();
    }
  }

  /** The outcomes, the job keys to unlock, the slot keys to unlock. @return the next index */
  private int bindCompletion(Connection c, PreparedStatement ps, List<Outcome> outcomes) throws SQLException {
    int i = bindOutcomes(c, ps, 1, outcomes);
    ps.setLong(i++, keyBase);
    Long[] slots = new Long[outcomes.size()];
    for (int k = 0; k < slots.length; k++) {
      slots[k] = outcomes.get(k).slotKey();
    }
    ps.setArray(i++, c.createArrayOf("int8", slots));
    return i;
  }

  private void bindClaim(Connection c, PreparedStatement ps, int i, int limit, Collection<Long> heldSlots)
      throws SQLException {
    if (keyed) {
      // more candidates than free threads, so that jobs of a key at its limit do not hide the others
      i = bindCandidates(c, ps, i);
      ps.setLong(i++, slotBase);
      ps.setInt(i++, config.concurrencyPerKey());
      ps.setArray(i++, c.createArrayOf("int8", heldSlots.toArray(new Long[0])));
      ps.setLong(i++, keyBase);
    } else if (ADVISORY_ONLY) {
      i = bindCandidates(c, ps, i);
      ps.setLong(i++, keyBase);
    } else {
      i = bindCandidates(c, ps, i);
      ps.setLong(i++, keyBase);
    }
    i = bindClaimed(c, ps, i, owner);
    ps.setLong(i, keyBase);
  }

  @Override
  public Heartbeat heartbeat(Collection<Long> running) throws SQLException {
    return session.call(c -> {
      // any round trip renews the session's lease; this one also learns of cancels
      List<Long> cancelled = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(sql.cancelCheck)) {
        ps.setArray(1, c.createArrayOf("int8", ids(running)));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            cancelled.add(rs.getLong(1));
          }
        }
      }
      return new Heartbeat(cancelled, List.of());
    });
  }

  @Override
  public int rescue() throws SQLException {
    return session.call(c -> {
      try (PreparedStatement ps = c.prepareStatement(DURABLE + sql.rescueAdvisory)) {
        int i = 1;
        ps.setString(i++, config.queue());
        ps.setLong(i++, owner);
        ps.setLong(i++, presenceBase);
        ps.setString(i++, config.queue());
        ps.setLong(i++, rescueAfter);
        ps.setLong(i++, keyBase);
        i = bindBack(c, ps, i, LOST);
        ps.setLong(i++, keyBase);
        ps.setLong(i, presenceBase);
        try (ResultSet rs = queryDurable(ps)) {
          rs.next();
          // a full batch: go on from its last id next time; else start over
          long last = rs.getLong(5);
          rescueAfter = rs.getInt(4) < JobSql.RESCUE_BATCH || rs.wasNull() ? 0 : last;
          return rs.getInt(1);
        }
      }
    });
  }

  @Override
  public int prune(int batch) throws SQLException {
    return session.call(c -> prune(c, batch));
  }

  @Override
  public boolean connectionLost(SQLException e) {
    LeasedSession s = session;
    return s == null || s.lossCause() != null;
  }

  @Override
  public void close() {
    LeasedSession s = session;
    session = null;
    if (s != null) {
      s.close(); // pg_advisory_unlock_all(), then the connection goes back as it came
    }
  }
}
