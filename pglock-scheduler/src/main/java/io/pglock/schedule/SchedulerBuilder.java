package io.pglock.schedule;

import io.pglock.PgLocks;
import io.pglock.schedule.internal.DefaultScheduler;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a {@link Scheduler}. Each option may be set once; a bad value throws
 * {@link IllegalArgumentException} naming the option and its limit.
 */
public final class SchedulerBuilder {
  /** Default {@link #pollInterval}: 1 s. */
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);
  /** Default {@link #sweepInterval}: 5 s. */
  public static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofSeconds(5);
  /** Default {@link #historyRetention}: 7 days. */
  public static final Duration DEFAULT_HISTORY_RETENTION = Duration.ofDays(7);
  /** Default {@link #closeTimeout}: 30 s. */
  public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);
  /** Default {@link #networkTimeout}: 10 s. */
  public static final Duration DEFAULT_NETWORK_TIMEOUT = Duration.ofSeconds(10);

  private final PgLocks locks;
  private Duration pollInterval;
  private Duration sweepInterval;
  private Duration historyRetention;
  private Duration closeTimeout;
  private Duration networkTimeout;
  private Clock clock;
  private SchedulerListener listener;

  SchedulerBuilder(PgLocks locks) {
    this.locks = Objects.requireNonNull(locks, "locks");
  }

  /**
   * How often the scheduler reads its tasks' flags (paused, manual triggers) and the state of
   * fixed-delay tasks: how soon a pause or a trigger from another node or the CLI is seen.
   * Default {@link #DEFAULT_POLL_INTERVAL}.
   *
   * @param interval from 50 ms to 1 h
   * @return this builder
   */
  public SchedulerBuilder pollInterval(Duration interval) {
    pollInterval = once("pollInterval", pollInterval, interval, Duration.ofMillis(50), Duration.ofHours(1));
    return this;
  }

  /**
   * How often the scheduler looks for runs whose runner disconnected (a running row whose task
   * lock nobody holds). Default {@link #DEFAULT_SWEEP_INTERVAL}.
   *
   * @param interval from 50 ms to 1 h
   * @return this builder
   */
  public SchedulerBuilder sweepInterval(Duration interval) {
    sweepInterval = once("sweepInterval", sweepInterval, interval, Duration.ofMillis(50), Duration.ofHours(1));
    return this;
  }

  /**
   * How long finished runs are kept in the history; older ones are deleted in small batches.
   * Default {@link #DEFAULT_HISTORY_RETENTION}.
   *
   * @param retention from 1 minute to 3660 days
   * @return this builder
   */
  public SchedulerBuilder historyRetention(Duration retention) {
    historyRetention = once("historyRetention", historyRetention, retention, Duration.ofMinutes(1),
        Duration.ofDays(3660));
    return this;
  }

  /**
   * How long {@link Scheduler#close()} lets running tasks finish before it interrupts them.
   * Default {@link #DEFAULT_CLOSE_TIMEOUT}.
   *
   * @param timeout from zero to 1 h
   * @return this builder
   */
  public SchedulerBuilder closeTimeout(Duration timeout) {
    closeTimeout = once("closeTimeout", closeTimeout, timeout, Duration.ZERO, Duration.ofHours(1));
    return this;
  }

  /**
   * The longest the scheduler's statements wait for the server's answers (the network timeout of
   * its connection). Default {@link #DEFAULT_NETWORK_TIMEOUT}.
   *
   * @param timeout from 100 ms to 10 min
   * @return this builder
   */
  public SchedulerBuilder networkTimeout(Duration timeout) {
    networkTimeout = once("networkTimeout", networkTimeout, timeout, Duration.ofMillis(100), Duration.ofMinutes(10));
    return this;
  }

  /**
   * The clock a run's {@link RunContext#deadline()} is given in (default the system's). Nothing
   * else reads it: the scheduler wakes by the database's clock, read every 30 s and advanced by the
   * monotonic clock in between, and slots are decided by the database.
   *
   * @param clock the clock
   * @return this builder
   */
  public SchedulerBuilder clock(Clock clock) {
    if (this.clock != null) {
      throw new IllegalStateException("clock was already set");
    }
    this.clock = Objects.requireNonNull(clock, "clock");
    return this;
  }

  /**
   * The listener that hears how runs end, for metrics (default none). It must be quick and
   * thread-safe; what it throws is caught and logged. See {@link SchedulerListener}, and
   * {@code pglock-micrometer}'s {@code SchedulerMetrics} for Micrometer meters.
   *
   * @param listener the listener
   * @return this builder
   * @throws IllegalStateException if a listener was already set
   */
  public SchedulerBuilder listener(SchedulerListener listener) {
    if (this.listener != null) {
      throw new IllegalStateException("listener was already set to " + this.listener);
    }
    this.listener = Objects.requireNonNull(listener, "listener");
    return this;
  }

  /**
   * Builds the scheduler (not started: register tasks, then {@link Scheduler#start()}).
   *
   * @return the scheduler
   */
  public Scheduler build() {
    return new DefaultScheduler(locks, or(pollInterval, DEFAULT_POLL_INTERVAL), or(sweepInterval, DEFAULT_SWEEP_INTERVAL),
        or(historyRetention, DEFAULT_HISTORY_RETENTION), or(closeTimeout, DEFAULT_CLOSE_TIMEOUT),
        or(networkTimeout, DEFAULT_NETWORK_TIMEOUT), clock != null ? clock : Clock.systemUTC(), listener);
  }

  private static Duration or(Duration set, Duration otherwise) {
    return set != null ? set : otherwise;
  }

  private static Duration once(String option, Duration previous, Duration value, Duration min, Duration max) {
    if (previous != null) {
      throw new IllegalStateException(option + " was already set to " + previous);
    }
    Objects.requireNonNull(value, option);
    if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(option + " must be from " + min + " to " + max + ": " + value);
    }
    return value;
  }
}
