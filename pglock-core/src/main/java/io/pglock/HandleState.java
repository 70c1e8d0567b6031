package io.pglock;

/** The life of a {@link LockHandle}: {@code HELD} then either {@code RELEASED} or {@code LOST}, never back. */
public enum HandleState {
  /** The lock is held, as far as pglock knows; see {@link LockHandle#isHeld()} for the lease check. */
  HELD,
  /** The handle was closed; the lock is released (on the server, perhaps a moment later). */
  RELEASED,
  /** The lock was lost before the handle was closed; {@link LockHandle#lost()} says why. */
  LOST
}
