package io.pglock.internal;

import io.pglock.LockHandle;
import io.pglock.LossCause;
import java.time.Duration;
import java.util.Objects;

/**
 * Why a watched lock handle is no longer held, for a thread that must tell someone (a leader's
 * {@code revoked}, an owner's {@code lost}, an ownership's membership): the one place that answers
 * it, used by the election, by ownership for its resources and by ownership for its membership.
 *
 * <p><b>Why it exists.</b> A handle reports "not held" ({@link LockHandle#isHeld()}, by the lease
 * clock or a dead session) a moment before its loss signal says why: a dying lock session is
 * marked dead first, then records its cause, then the handles are marked lost and the callbacks go
 * out on the callback executor. A watcher that reads the cause from the loss signal
 * ({@link LockHandle#lost()}) reads it late: that future is created on the first call and, when the
 * loss already happened, completed on the callback executor, after the call returned; the watcher
 * then found no cause and slept a watch tick (100 ms) before it looked again. This reads the cause
 * from the engine at once instead: the handle's own cause, else its session's, else
 * {@link LossCause#LEASE_EXPIRED} when the lease deadline passed on a live session. Only in the
 * nanoseconds between a session being marked dead and its cause being recorded is the cause
 * unknown; then the watcher waits, at most {@link #graceFor a twentieth of the lease} (well inside
 * the core's margin of a tenth between the client's deadline and the server's), and reports
 * {@code LEASE_EXPIRED} if no cause came.
 *
 * <p><b>Waking.</b> The constructor registers a loss callback that runs the given wake-up (the
 * watcher's {@code notifyAll}), so the watcher need not poll to learn of a loss; its periodic look
 * is only the fallback for a lease that runs out on a session whose watchdog is late.
 *
 * <p>One instance per handle; {@link #poll} on the watcher's thread only (or under its monitor).
 */
public final class LossCauseWait {
  /** The longest a watcher waits for a cause, whatever the lease. */
  private static final long MAX_GRACE_NANOS = 500_000_000L;

  private final LockHandle handle;
  private final long graceNanos;
  /** When the handle was first seen not held with no cause known; 0 until then. */
  private long unknownSince;

  /**
   * Watches a handle.
   *
   * @param handle the handle to watch
   * @param lease the lease of the {@code PgLocks} that holds it
   * @param wake run (on the callback executor) when the handle is lost; must not block
   */
  public LossCauseWait(LockHandle handle, Duration lease, Runnable wake) {
    this.handle = Objects.requireNonNull(handle, "handle");
    this.graceNanos = graceFor(lease).toNanos();
    Objects.requireNonNull(wake, "wake");
    handle.onLoss(cause -> wake.run());
  }

  /**
   * The longest a watcher waits for the cause of a loss: a twentieth of the lease, at most 500 ms.
   *
   * @param lease the lease of the {@code PgLocks}
   * @return the bound
   */
  public static Duration graceFor(Duration lease) {
    return Duration.ofNanos(Math.min(MAX_GRACE_NANOS, lease.toNanos() / 20));
  }

  /** {@return the handle watched} */
  public LockHandle handle() {
    return handle;
  }

  /**
   * Whether, and why, the handle was lost: null while it is held, and while it is not but its
   * cause is still being recorded (for at most the grace); the cause otherwise.
   * {@link LossCause#CLOSED} means the {@code PgLocks} was closed. A handle closed by its owner
   * reads as {@code CLOSED} too: the watcher closed it, so it no longer asks.
   *
   * @param nowNanos now, on the {@link System#nanoTime()} scale
   * @return the cause, or null
   */
  public LossCause poll(long nowNanos) {
    if (handle.isHeld()) {
      unknownSince = 0;
      return null;
    }
    LossCause cause = knownCause(handle);
    if (cause != null) {
      return cause;
    }
    if (unknownSince == 0) {
      unknownSince = nowNanos == 0 ? 1 : nowNanos;
    }
    return nowNanos - unknownSince >= graceNanos ? LossCause.LEASE_EXPIRED : null;
  }

  /**
   * How long the watcher may sleep before its next {@link #poll}: the rest of the grace while a
   * cause is awaited, otherwise {@code tickNanos}.
   *
   * @param nowNanos now, on the {@link System#nanoTime()} scale
   * @param tickNanos the watcher's periodic look
   * @return nanoseconds, at least 1
   */
  public long sleepNanos(long nowNanos, long tickNanos) {
    if (unknownSince == 0) {
      return tickNanos;
    }
    return Math.max(1, Math.min(tickNanos, unknownSince + graceNanos - nowNanos));
  }

  /** The cause as far as the engine knows it now; null if not yet recorded (or while held). */
  private static LossCause knownCause(LockHandle handle) {
    if (!(handle instanceof DefaultLockHandle)) {
      return handle.lost().toCompletableFuture().getNow(null); // another implementation: its signal
    }
    DefaultLockHandle h = (DefaultLockHandle) handle;
    switch (h.state()) {
      case HELD:
        return null;
      case RELEASED:
        return LossCause.CLOSED;
      default:
        break;
    }
    LockSession session = h.session();
    // Read in the order the session writes (dead, then its cause): dead with no cause means it is
    // dying right now, and the handle's answer would be a guess (LEASE_EXPIRED) unless it was
    // marked already (the PgLocks was closed).
    boolean dead = session.isDead();
    LossCause sessionCause = session.lossCause();
    LossCause cause = h.lossCause();
    if (dead && sessionCause == null && cause == LossCause.LEASE_EXPIRED) {
      return null;
    }
    return cause; // null: the handle is being marked lost right now, its cause not yet written

  }
}
