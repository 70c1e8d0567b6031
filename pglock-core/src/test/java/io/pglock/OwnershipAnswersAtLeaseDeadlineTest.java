package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.election.Candidate;
import io.pglock.election.LeaderElection;
import io.pglock.election.Membership;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import io.pglock.internal.TestAccess;
import io.pglock.ownership.OwnedResource;
import io.pglock.ownership.Owner;
import io.pglock.ownership.Ownership;
import io.pglock.ownership.Release;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every "do I still lead / belong / own it?" answer of the election, the membership and ownership
 * turns false at the lock session's lease deadline by the monotonic clock, never later, like
 * {@link LockHandle#isHeld()}: the holder is "paused" by moving the lease's monotonic clock (a test
 * clock, {@link TestAccess.JumpingClock}) to just before the deadline (every answer still true) and
 * then just past it (every answer false at once, before any thread of pglock has run or any round
 * trip). Then each user is told, with {@code LEASE_EXPIRED}.
 */
class OwnershipAnswersAtLeaseDeadlineTest extends PgLocksTestSupport {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private final String suffix = UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  static void schema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @Test
  void leader_member_andOwner_sayNo_fromTheLeaseDeadline_byTheMonotonicClock() throws Exception {
    TestAccess.JumpingClock clock = new TestAccess.JumpingClock();
    // A long lease: no heartbeat falls due while the test moves the clock (one lock session: one deadline)
    PgLocks locks = track(TestAccess.start(builder().nodeName("paused-" + suffix).lease(Duration.ofSeconds(60)),
        clock));
    AtomicReference<Revocation> revoked = new AtomicReference<>();
    LeaderElection election = track(LeaderElection.join(locks, "e-" + suffix, new Candidate() {
      @Override
      public void elected(Term term) {}

      @Override
      public void revoked(Term term, Revocation reason) {
        revoked.compareAndSet(null, reason);
      }
    }));
    Membership member = track(Membership.join(locks, "m-" + suffix));
    Map<String, Release> lost = new ConcurrentHashMap<>();
    Ownership ownership = track(Ownership.join(locks, "o-" + suffix, List.of("a", "b", "c"), new Owner() {
      @Override
      public void gained(OwnedResource r) {}

      @Override
      public void lost(OwnedResource r, Release why) {
        lost.putIfAbsent(r.resource(), why);
      }
    }));
    await("leading, joined and owning all three", WAIT,
        () -> election.isLeader() && member.isJoined() && ownership.owned().size() == 3);
    LockHandle probe = locks.lock("probe-" + suffix).tryAcquire().orElseThrow(); // same session, same lease
    LongSupplier deadline = TestAccess.leaseDeadline(probe);

    clock.advanceMonotonic(Duration.ofNanos(deadline.getAsLong() - clock.nanoTime() - 20_000_000L));
    boolean[] before = answers(election, member, ownership);
    clock.advanceMonotonic(Duration.ofMillis(40));
    boolean[] after = answers(election, member, ownership);

    assertThat(before).as("isLeader, currentTerm, isJoined, owned, ownership(a): 20 ms before the deadline")
        .containsOnly(true);
    assertThat(after).as("isLeader, currentTerm, isJoined, owned, ownership(a): 20 ms past the deadline")
        .containsOnly(false);
    await("the leader told", WAIT, () -> revoked.get() != null);
    assertThat(revoked.get()).isEqualTo(Revocation.LEASE_EXPIRED);
    await("the owner told of all three", WAIT, () -> lost.size() == 3);
    assertThat(lost.values()).containsOnly(Release.LEASE_EXPIRED);
    await("the membership's loss signalled", WAIT, () -> member.lost().toCompletableFuture().isDone());
    assertThat(member.lost().toCompletableFuture().get()).isEqualTo(LossCause.LEASE_EXPIRED);
  }

  private static boolean[] answers(LeaderElection e, Membership m, Ownership o) {
    return new boolean[] {e.isLeader(), e.currentTerm().isPresent(), m.isJoined(), !o.owned().isEmpty(),
        o.ownership("a").isPresent()};
  }
}
