package io.pglock.election;

import io.pglock.PgLocks;
import io.pglock.election.internal.DefaultLeaderElection;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings for joining a {@link LeaderElection}. Each option may be set once; a bad value throws
 * {@link IllegalArgumentException} naming the option and its limit. Not thread-safe; use one
 * builder per election.
 */
public final class LeaderElectionBuilder {
  /** The default bound of the random delay of the first attempt: 50 ms. */
  public static final Duration DEFAULT_FIRST_ATTEMPT_JITTER = Duration.ofMillis(50);
  /** The default shortest back-off after {@link LeaderElection#reportBroken}: 1 s. */
  public static final Duration DEFAULT_BROKEN_BACKOFF_MIN = Duration.ofSeconds(1);
  /** The default longest back-off after {@link LeaderElection#reportBroken}: 2 s. */
  public static final Duration DEFAULT_BROKEN_BACKOFF_MAX = Duration.ofSeconds(2);
  /** The default longest wait of {@link LeaderElection#close()}: 10 s. */
  public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration MAX = Duration.ofHours(1);

  private final PgLocks locks;
  private final String name;
  private Duration firstAttemptJitter;
  private Duration brokenBackoffMin;
  private Duration brokenBackoffMax;
  private Duration closeTimeout;

  LeaderElectionBuilder(PgLocks locks, String name) {
    this.locks = Objects.requireNonNull(locks, "locks");
    this.name = Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("election name must not be blank");
    }
  }

  /**
   * The bound of the random delay before the first attempt, so that a fleet starting at once does
   * not reach the server together. Default {@link #DEFAULT_FIRST_ATTEMPT_JITTER}.
   *
   * @param jitter from zero (no delay) to an hour
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if set before
   */
  public LeaderElectionBuilder firstAttemptJitter(Duration jitter) {
    if (firstAttemptJitter != null) {
      throw new IllegalStateException("firstAttemptJitter was already set to " + firstAttemptJitter);
    }
    firstAttemptJitter = check("firstAttemptJitter", jitter, Duration.ZERO);
    return this;
  }

  /**
   * How long a node that reported itself broken waits before it stands again: a random time between
   * the bounds. Default {@link #DEFAULT_BROKEN_BACKOFF_MIN} to {@link #DEFAULT_BROKEN_BACKOFF_MAX}.
   *
   * @param min the shortest back-off, from zero to an hour
   * @param max the longest back-off, from {@code min} to an hour
   * @return this builder
   * @throws IllegalArgumentException if out of range, or {@code max < min}
   * @throws IllegalStateException if set before
   */
  public LeaderElectionBuilder brokenBackoff(Duration min, Duration max) {
    if (brokenBackoffMin != null) {
      throw new IllegalStateException("brokenBackoff was already set to " + brokenBackoffMin + ".." + brokenBackoffMax);
    }
    Duration lo = check("brokenBackoff min", min, Duration.ZERO);
    brokenBackoffMax = check("brokenBackoff max", max, lo);
    brokenBackoffMin = lo;
    return this;
  }

  /**
   * The longest {@link LeaderElection#close()} waits for the election's thread (a revocation
   * callback that is still running). Default {@link #DEFAULT_CLOSE_TIMEOUT}.
   *
   * @param timeout from a millisecond to an hour
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if set before
   */
  public LeaderElectionBuilder closeTimeout(Duration timeout) {
    if (closeTimeout != null) {
      throw new IllegalStateException("closeTimeout was already set to " + closeTimeout);
    }
    closeTimeout = check("closeTimeout", timeout, Duration.ofMillis(1));
    return this;
  }

  /**
   * Joins the election: starts the election's thread, which stands after the first-attempt jitter.
   *
   * @param candidate told when this node is elected and revoked
   * @return the election
   * @throws NullPointerException if the candidate is null
   * @throws IllegalArgumentException if the election's name is too long for a lock name
   * @throws io.pglock.SchemaMissingException if the database lacks the fencing schema
   *     ({@link io.pglock.PgLockSchema#migrate})
   * @throws io.pglock.PgLocksClosedException if the {@code PgLocks} is closed
   */
  public LeaderElection join(Candidate candidate) {
    Objects.requireNonNull(candidate, "candidate");
    DefaultLeaderElection election = new DefaultLeaderElection(locks, name, candidate,
        orDefault(firstAttemptJitter, DEFAULT_FIRST_ATTEMPT_JITTER),
        orDefault(brokenBackoffMin, DEFAULT_BROKEN_BACKOFF_MIN), orDefault(brokenBackoffMax, DEFAULT_BROKEN_BACKOFF_MAX),
        orDefault(closeTimeout, DEFAULT_CLOSE_TIMEOUT));
    election.start();
    return election;
  }

  private static Duration orDefault(Duration set, Duration otherwise) {
    return set != null ? set : otherwise;
  }

  private static Duration check(String option, Duration value, Duration min) {
    Objects.requireNonNull(value, option);
    if (value.compareTo(min) < 0 || value.compareTo(MAX) > 0) {
      throw new IllegalArgumentException(option + " must be from " + min + " to " + MAX + ": " + value);
    }
    return value;
  }
}
