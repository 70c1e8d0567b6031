package io.pglock;

/** How a lock is held: alone, or together with other shared holders. */
public enum LockMode {
  /** Excludes every other holder ({@code pg_advisory_lock}). */
  EXCLUSIVE,
  /** Shared with other shared holders, excludes exclusive ones ({@code pg_advisory_lock_shared}). */
  SHARED
}
