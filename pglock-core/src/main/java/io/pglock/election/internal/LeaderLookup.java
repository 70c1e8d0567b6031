package io.pglock.election.internal;

import io.pglock.LockEntry;
import io.pglock.LockKey;
import io.pglock.LockListing;
import io.pglock.election.Leader;
import io.pglock.election.LeaderElection;
import java.util.Optional;
import javax.sql.DataSource;

/** Finds an election's leader in the who-holds-what listing: the holder of the election's lock. */
public final class LeaderLookup {
  private LeaderLookup() {}

  /** The granted holder of {@code "election:<name>"} in the namespace, if any. */
  public static Optional<Leader> find(DataSource dataSource, String schema, String namespace, String name) {
    LockKey key = LockKey.named(namespace, LeaderElection.lockName(name));
    for (LockEntry e : LockListing.of(dataSource, schema).list()) {
      if (e.granted() && e.key().sameServerLock(key)) {
        return Optional.of(new Leader(name, e.node(), e.pid(), e.applicationName(), e.since()));
      }
    }
    return Optional.empty();
  }
}
