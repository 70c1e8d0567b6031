package io.pglock.internal;

import java.time.Duration;

/**
 * The client's view of a lock session's server-side lease.
 *
 * <p>The server ends an idle session, freeing its locks, no earlier than the lease (L) after the
 * session's last statement finished. A statement whose answer came back was sent at client time s,
 * so it finished after s and the server cannot free the locks before s + L. The other server timers
 * that can end the session (TCP keepalive detection, {@code tcp_user_timeout}) are set to L as well
 * and also start no earlier than s. The client therefore counts its locks as held only until
 * {@code s_last + L - margin}, where s_last is the send time of the newest statement that succeeded,
 * and the margin covers clock-rate error and scheduling jitter.
 *
 * <p><b>Two clocks.</b> Elapsed time since s_last is measured on the monotonic clock and on the wall
 * clock, and the lease has run out when either says so. The monotonic clock alone would be fooled by
 * a suspended VM or host (it stops while the server's clock runs on, so after a resume the client
 * would still count locks the server freed long ago); the wall clock alone would be fooled by a step
 * backwards. A wall-clock step forwards can only end the lease early: pglock then reports a loss that
 * did not happen, the safe side.
 */
final class Lease {
  private final LeaseClock clock;
  private final long windowNanos;
  private final long marginNanos;
  private final long heartbeatNanos;
  /** Wall-clock window less the margin, in milliseconds. */
  private final long validWallMillis;
  private volatile long lastOkSent;
  private volatile long lastOkSentWall;

  Lease(Duration lease, long firstOkSent) {
    this(lease, firstOkSent, LeaseClock.SYSTEM);
  }

  Lease(Duration lease, long firstOkSent, LeaseClock clock) {
    this.clock = clock;
    this.windowNanos = lease.toNanos();
    this.marginNanos = Math.max(Duration.ofMillis(100).toNanos(), windowNanos / 10);
    this.heartbeatNanos = windowNanos / 3;
    this.validWallMillis = (windowNanos - marginNanos) / 1_000_000;
    this.lastOkSent = firstOkSent;
    // the wall-clock reading of the same instant
    this.lastOkSentWall = clock.wallMillis() - Math.max(0, (clock.nanoTime() - firstOkSent) / 1_000_000);
  }

  /** The same lease read through other clocks (a test's). */
  Lease withClock(LeaseClock other) {
    return new Lease(Duration.ofNanos(windowNanos), lastOkSent, other);
  }

  /** Now on the monotonic clock: the send time to pass to {@link #succeeded}. */
  long now() {
    return clock.nanoTime();
  }

  /** Now on the wall clock: the wall-clock send time to pass to {@link #succeeded}. */
  long nowWall() {
    return clock.wallMillis();
  }

  /** Records a statement, sent at the given times, whose answer came back. */
  void succeeded(long sentNanos, long sentWallMillis) {
    if (sentNanos - lastOkSent > 0) {
      lastOkSent = sentNanos;
      lastOkSentWall = sentWallMillis;
    }
  }

  /** True once the server may have freed the locks, by either clock. */
  boolean expired() {
    return clock.nanoTime() - deadline() >= 0 || clock.wallMillis() - lastOkSentWall >= validWallMillis;
  }

  /** Past this instant (monotonic scale) the server may have freed the locks, unless the wall clock says sooner. */
  long deadline() {
    return lastOkSent + windowNanos - marginNanos;
  }

  /**
   * How long until the lease runs out by the stricter clock, in nanoseconds (zero or less when it
   * has).
   */
  long remainingNanos() {
    long byMonotonic = deadline() - clock.nanoTime();
    long byWall = (lastOkSentWall + validWallMillis - clock.wallMillis()) * 1_000_000;
    return Math.min(byMonotonic, byWall);
  }

  /** How long until the next heartbeat is due if nothing else renews the lease (zero or less: due). */
  long untilHeartbeat() {
    return remainingNanos() - (windowNanos - marginNanos - heartbeatNanos);
  }

  @Override
  public String toString() {
    return Duration.ofNanos(windowNanos) + " less a margin of " + Duration.ofNanos(marginNanos);
  }
}
