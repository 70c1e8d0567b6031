package io.pglock.ownership;

import io.pglock.PgLocks;
import io.pglock.election.internal.MemberLookup;
import io.pglock.ownership.internal.DefaultOwnership;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;

/**
 * Settings for joining an {@link Ownership} group. Each option may be set once; a bad value throws
 * {@link IllegalArgumentException} naming the option and its limit. Not thread-safe; use one
 * builder per join.
 */
public final class OwnershipBuilder {
  /** The default time between two balancing rounds of a member: 1 s (each jittered by ±20%). */
  public static final Duration DEFAULT_REBALANCE_INTERVAL = Duration.ofSeconds(1);
  /** The default longest wait of {@link Ownership#close()}: 10 s. */
  public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration MIN_INTERVAL = Duration.ofMillis(50);
  private static final Duration MAX = Duration.ofHours(1);

  private final PgLocks locks;
  private final String group;
  private String memberId;
  private Duration rebalanceInterval;
  private Duration closeTimeout;

  OwnershipBuilder(PgLocks locks, String group) {
    this.locks = Objects.requireNonNull(locks, "locks");
    this.group = MemberLookup.checkGroup(group);
  }

  /**
   * This member's id in the group. Default: the node name of the {@code PgLocks}. A member's
   * resources are counted by the node name of the connections that hold them, so one
   * {@code PgLocks} should be in a group once.
   *
   * @param id not blank, unique in the group
   * @return this builder
   * @throws IllegalArgumentException if blank
   * @throws IllegalStateException if set before
   */
  public OwnershipBuilder memberId(String id) {
    if (memberId != null) {
      throw new IllegalStateException("memberId was already set to " + memberId);
    }
    Objects.requireNonNull(id, "memberId");
    if (id.isBlank()) {
      throw new IllegalArgumentException("memberId must not be blank");
    }
    memberId = id;
    return this;
  }

  /**
   * The time between two balancing rounds of this member (each jittered by ±20%): how soon it
   * takes over the resources of a member that left, and gives resources to one that joined. Each
   * round is one query of the server's lock table. Keep it well under the lease, so that a crashed
   * member's resources are taken soon after the server frees them. Default
   * {@link #DEFAULT_REBALANCE_INTERVAL}.
   *
   * @param interval from 50 ms to an hour
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if set before
   */
  public OwnershipBuilder rebalanceInterval(Duration interval) {
    if (rebalanceInterval != null) {
      throw new IllegalStateException("rebalanceInterval was already set to " + rebalanceInterval);
    }
    rebalanceInterval = check("rebalanceInterval", interval, MIN_INTERVAL);
    return this;
  }

  /**
   * The longest {@link Ownership#close()} waits for the owner's callbacks and the releases.
   * Default {@link #DEFAULT_CLOSE_TIMEOUT}.
   *
   * @param timeout from a millisecond to an hour
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if set before
   */
  public OwnershipBuilder closeTimeout(Duration timeout) {
    if (closeTimeout != null) {
      throw new IllegalStateException("closeTimeout was already set to " + closeTimeout);
    }
    closeTimeout = check("closeTimeout", timeout, Duration.ofMillis(1));
    return this;
  }

  /**
   * Joins the group: records the lock names and joins the membership on the calling thread (a few
   * round trips, so that errors reach the caller), then starts the ownership's threads, which
   * balance. The first resources are gained within a round.
   *
   * @param resources the resources to share: names, not blank; duplicates count once
   * @param owner told when this member gains and loses resources
   * @return the ownership
   * @throws NullPointerException if an argument or a resource name is null
   * @throws IllegalArgumentException if a resource name is blank, a lock name is too long, or the
   *     node name of the {@code PgLocks} has a {@code ':'}
   * @throws IllegalStateException if a member with this id, or another member with this node name,
   *     is already in the group (nothing is then held)
   * @throws io.pglock.SchemaMissingException if the database lacks the fencing schema or the
   *     who-holds-what view ({@link io.pglock.PgLockSchema#migrate})
   * @throws io.pglock.LockSessionException if the database cannot be reached
   * @throws io.pglock.PgLocksClosedException if the {@code PgLocks} is closed
   */
  public Ownership join(Collection<String> resources, Owner owner) {
    DefaultOwnership ownership = new DefaultOwnership(locks, group,
        memberId != null ? memberId : locks.config().nodeName(), resources, Objects.requireNonNull(owner, "owner"),
        rebalanceInterval != null ? rebalanceInterval : DEFAULT_REBALANCE_INTERVAL,
        closeTimeout != null ? closeTimeout : DEFAULT_CLOSE_TIMEOUT);
    ownership.start();
    return ownership;
  }

  private static Duration check(String option, Duration value, Duration min) {
    Objects.requireNonNull(value, option);
    if (value.compareTo(min) < 0 || value.compareTo(MAX) > 0) {
      throw new IllegalArgumentException(option + " must be from " + min + " to " + MAX + ": " + value);
    }
    return value;
  }
}
