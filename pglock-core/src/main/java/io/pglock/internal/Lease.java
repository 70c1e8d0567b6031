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
 * {@code s_last + L - margin}, where s_last is the send time, on the monotonic clock, of the newest
 * statement that succeeded, and the margin covers clock-rate error and scheduling jitter.
 */
final class Lease {
  private final long windowNanos;
  private final long marginNanos;
  private final long heartbeatNanos;
  private volatile long lastOkSent;

  Lease(Duration lease, long firstOkSent) {
    this.windowNanos = lease.toNanos();
    this.marginNanos = Math.max(Duration.ofMillis(100).toNanos(), windowNanos / 10);
    this.heartbeatNanos = windowNanos / 3;
    this.lastOkSent = firstOkSent;
  }

  /** Records a statement, sent at the given time, whose answer came back. */
  void succeeded(long sentNanos) {
    if (sentNanos - lastOkSent > 0) {
      lastOkSent = sentNanos;
    }
  }

  /** Past this instant ({@link System#nanoTime()} scale) the server may have freed the locks. */
  long deadline() {
    return lastOkSent + windowNanos - marginNanos;
  }

  /** When the next heartbeat is due if nothing else renews the lease. */
  long nextHeartbeat() {
    return lastOkSent + heartbeatNanos;
  }

  @Override
  public String toString() {
    return Duration.ofNanos(windowNanos) + " less a margin of " + Duration.ofNanos(marginNanos);
  }
}
