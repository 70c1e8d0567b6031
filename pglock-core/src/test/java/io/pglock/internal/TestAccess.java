package io.pglock.internal;

import io.pglock.LockHandle;
import java.util.function.LongSupplier;

/**
 * Test-only access to engine state that the public API does not expose. Lives in test sources, in
 * the engine's package, so that production code carries no test hook.
 */
public final class TestAccess {
  private TestAccess() {}

  /**
   * The lease deadline ({@link System#nanoTime()} scale) of the lock session that carries the
   * handle's lock now, read on each call from that session (also after the session died, when it
   * is the deadline the session ended with).
   *
   * @throws IllegalStateException if the handle's lock is not on a session (released or lost)
   */
  public static LongSupplier leaseDeadline(LockHandle handle) {
    LockSession session = ((DefaultLockHandle) handle).state.session;
    if (session == null) {
      throw new IllegalStateException("the lock of " + handle + " is on no session");
    }
    return session::leaseDeadline;
  }
}
