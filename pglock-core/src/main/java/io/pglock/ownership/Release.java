package io.pglock.ownership;

/**
 * Why a member stopped owning a resource, as {@link Owner#lost} is told. By the time the owner is
 * told, the resource is no longer its own: its work on the resource must stop, and writes that
 * must not come from a former owner are to be checked with the fencing token.
 */
public enum Release {
  /** Handed on so that the load stays balanced: another member joined, or this one owned too many. */
  REBALANCED,
  /** The resource is no longer in this member's set ({@link Ownership#resources(java.util.Collection)}). */
  REMOVED,
  /** The connection that held the resource's lock died, or its backend was terminated. */
  CONNECTION_LOST,
  /**
   * No round trip succeeded within the lease: the server may free the lock from now on, so this
   * member stops first (a pause or a silent network failure).
   */
  LEASE_EXPIRED,
  /**
   * {@link Ownership#close()}: told before the lock is released. Also when the {@code PgLocks} was
   * closed under the ownership: then the lock was freed first (close the ownership before its
   * {@code PgLocks}).
   */
  SHUTDOWN
}
