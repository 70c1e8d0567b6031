package io.pglock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The lease rule on its own, without a database: the decision every "do I still hold it?" answer of
 * the core rests on ({@code LockHandle.isHeld()}, and through it the election, membership, ownership,
 * the scheduler's run context and the queue's jobs). Both clocks are the test's.
 */
class LeaseTest {
  private static final Duration LEASE = Duration.ofSeconds(30);
  /** The margin for a 30 s lease: a tenth of it. */
  private static final long MARGIN_NANOS = Duration.ofSeconds(3).toNanos();

  /** Two clocks a test moves by hand. */
  private static final class Clocks implements LeaseClock {
    long nanos = 1_000_000_000L;
    long wall = 1_700_000_000_000L;

    @Override
    public long nanoTime() {
      return nanos;
    }

    @Override
    public long wallMillis() {
      return wall;
    }

    void advance(Duration d) {
      nanos += d.toNanos();
      wall += d.toMillis();
    }
  }

  @Test
  void heldUntilTheLeaseLessTheMargin_afterTheLastAnsweredSend_thenExpired() {
    Clocks c = new Clocks();
    Lease lease = new Lease(LEASE, c.nanos, c);
    long expiresAfter = LEASE.toNanos() - MARGIN_NANOS;

    c.advance(Duration.ofNanos(expiresAfter - 1));
    assertThat(lease.expired()).as("one nanosecond before the deadline").isFalse();
    assertThat(lease.remainingNanos()).isPositive();
    c.advance(Duration.ofNanos(1));
    assertThat(lease.expired()).as("at the deadline").isTrue();
    assertThat(lease.remainingNanos()).isLessThanOrEqualTo(0);
  }

  @Test
  void aRenewalCountsFromWhenItsStatementWasSent_notWhenItsAnswerCame() {
    Clocks c = new Clocks();
    Lease lease = new Lease(LEASE, c.nanos, c);
    c.advance(Duration.ofSeconds(10));
    long sent = lease.now();
    long sentWall = lease.nowWall();
    c.advance(Duration.ofSeconds(5)); // the answer took 5 s
    lease.succeeded(sent, sentWall);

    assertThat(lease.deadline()).isEqualTo(sent + LEASE.toNanos() - MARGIN_NANOS);
    c.advance(Duration.ofSeconds(21)); // 26 s after the send: 27 s is the deadline
    assertThat(lease.expired()).isFalse();
    c.advance(Duration.ofSeconds(1));
    assertThat(lease.expired()).isTrue();
  }

  @Test
  void anOlderSendAnsweredLate_neverMovesTheDeadlineBack() {
    Clocks c = new Clocks();
    Lease lease = new Lease(LEASE, c.nanos, c);
    long oldSent = lease.now();
    long oldWall = lease.nowWall();
    c.advance(Duration.ofSeconds(10));
    lease.succeeded(lease.now(), lease.nowWall());
    long deadline = lease.deadline();

    lease.succeeded(oldSent, oldWall); // a reply to the earlier statement, processed after
    assertThat(lease.deadline()).isEqualTo(deadline);
  }

  @Test
  void aSuspendedMachine_whoseMonotonicClockStood_expiresByTheWallClock() {
    Clocks c = new Clocks();
    Lease lease = new Lease(LEASE, c.nanos, c);
    c.wall += Duration.ofMinutes(5).toMillis(); // the VM was suspended: only the wall clock ran

    assertThat(lease.expired()).isTrue();
    assertThat(lease.remainingNanos()).isNegative();
  }

  @Test
  void aWallClockStepBack_doesNotExtendTheLease_theMonotonicClockStillEndsIt() {
    Clocks c = new Clocks();
    Lease lease = new Lease(LEASE, c.nanos, c);
    c.wall -= Duration.ofHours(1).toMillis(); // NTP stepped the clock back
    c.nanos += LEASE.toNanos() - MARGIN_NANOS;

    assertThat(lease.expired()).isTrue();
  }

  @Test
  void theHeartbeatFallsDue_aThirdOfTheLeaseAfterTheLastRenewal() {
    Clocks c = new Clocks();
    Lease lease = new Lease(LEASE, c.nanos, c);
    c.advance(Duration.ofSeconds(10).minusNanos(1));
    assertThat(lease.untilHeartbeat()).isPositive();
    c.advance(Duration.ofNanos(1));
    assertThat(lease.untilHeartbeat()).isLessThanOrEqualTo(0);
  }

  @Test
  void aShortLeaseKeepsAMarginOfAtLeast100ms() {
    Clocks c = new Clocks();
    Lease lease = new Lease(Duration.ofMillis(500), c.nanos, c);
    assertThat(lease.deadline() - c.nanos).isEqualTo(Duration.ofMillis(400).toNanos());
  }
}
