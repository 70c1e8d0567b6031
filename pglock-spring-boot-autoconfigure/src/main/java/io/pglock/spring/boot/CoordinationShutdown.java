package io.pglock.spring.boot;

import io.pglock.election.LeaderElection;
import io.pglock.election.Membership;
import io.pglock.ownership.Ownership;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

/**
 * Closes the application's own {@link Ownership}, {@link LeaderElection} and {@link Membership}
 * beans first when the context stops (phase {@link PgLockPhases#OWNERSHIP}, the highest of
 * pglock's), so that their owners and leaders are told and their resources move to other nodes
 * while the workers, the scheduler and {@code PgLocks} still run. Without this they would close only
 * when their beans are destroyed, after every lifecycle has stopped. Closing is idempotent, so their
 * own destroy methods may close them again.
 */
public final class CoordinationShutdown implements SmartLifecycle {
  private final ObjectProvider<Ownership> ownerships;
  private final ObjectProvider<LeaderElection> elections;
  private final ObjectProvider<Membership> memberships;
  private volatile boolean running;

  /**
   * Creates the lifecycle.
   *
   * @param ownerships the application's ownership beans
   * @param elections the application's election beans
   * @param memberships the application's membership beans
   */
  public CoordinationShutdown(ObjectProvider<Ownership> ownerships, ObjectProvider<LeaderElection> elections,
      ObjectProvider<Membership> memberships) {
    this.ownerships = ownerships;
    this.elections = elections;
    this.memberships = memberships;
  }

  @Override
  public void start() {
    running = true;
  }

  @Override
  public void stop() {
    running = false;
    ownerships.orderedStream().forEach(Ownership::close);
    elections.orderedStream().forEach(LeaderElection::close);
    memberships.orderedStream().forEach(Membership::close);
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return PgLockPhases.OWNERSHIP;
  }
}
