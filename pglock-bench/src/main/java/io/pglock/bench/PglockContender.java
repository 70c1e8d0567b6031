package io.pglock.bench;

import io.pglock.PgLocks;
import io.pglock.election.Candidate;
import io.pglock.election.LeaderElection;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import java.time.Duration;
import java.util.Map;

/**
 * A pglock contender: one {@code PgLocks} (node {@code node}, namespace {@code namespace}, lease
 * {@code leaseMs}) that joins {@code LeaderElection} {@code election} with the election's default
 * settings. Leaving is {@code LeaderElection.close()}: revoked first, then released.
 */
final class PglockContender implements ElectionContender {
  private final PgLocks locks;
  private final String election;
  private LeaderElection joined;

  PglockContender(Map<String, String> opts) {
    this.locks = PgLocks.builder(CountingDataSource.wrap(ChildDataSources.simple(opts))).namespace(opts.get("namespace")).nodeName(opts.get("node"))
        .lease(Duration.ofMillis(Long.parseLong(opts.get("leaseMs")))).build();
    this.election = opts.get("election");
  }

  @Override
  public void stand() {
    joined = LeaderElection.join(locks, election, new Candidate() {
      @Override
      public void elected(Term term) {
        ContenderMain.out("ELECTED " + System.nanoTime());
      }

      @Override
      public void revoked(Term term, Revocation reason) {
        ContenderMain.out("REVOKED " + reason + " " + System.nanoTime());
      }
    });
    // The election's thread stands on its own; whether its wait reached the server the parent
    // sees in pg_locks (a waiting advisory lock of this node).
    ContenderMain.out("STANDING " + System.nanoTime());
  }

  @Override
  public void leave() {
    joined.close();
  }

  @Override
  public boolean isLeader() {
    return joined != null && joined.isLeader();
  }

  @Override
  public void close() {
    if (joined != null) {
      joined.close();
    }
    locks.close();
  }
}
