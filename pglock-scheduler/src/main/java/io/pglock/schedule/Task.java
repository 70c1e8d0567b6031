package io.pglock.schedule;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A task: a name (unique in its namespace), a {@link Schedule}, policies and the code to run.
 * Immutable; build with {@link #builder(String, Schedule)}.
 *
 * <pre>{@code
 * Task report = Task.builder("nightly-report", Schedule.cron("0 30 2 * * *", ZoneId.of("Europe/Paris")))
 *     .missedSlots(MissedSlots.RUN_ONCE)
 *     .deadline(Duration.ofMinutes(20))
 *     .build(ctx -> reports.build(ctx.slot()));
 * }</pre>
 */
public final class Task {
  /**
   * The most a slot may be late by default and still run as scheduled: 10 s, or less when the next
   * slot comes sooner (see {@link Builder#missedAfter}).
   */
  public static final Duration DEFAULT_MISSED_AFTER = Duration.ofSeconds(10);
  /** The default of {@link Builder#catchUpLimit}: 10. */
  public static final int DEFAULT_CATCH_UP_LIMIT = 10;
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");

  private final String name;
  private final Schedule schedule;
  private final MissedSlots missedSlots;
  private final Duration missedAfter;
  private final int catchUpLimit;
  private final Overlap overlap;
  private final Duration deadline;
  private final int maxAttempts;
  private final TaskBody body;

  private Task(Builder b, TaskBody body) {
    this.name = b.name;
    this.schedule = b.schedule;
    this.missedSlots = b.missedSlots;
    this.missedAfter = b.missedAfter;
    this.catchUpLimit = b.catchUpLimit;
    this.overlap = b.overlap;
    this.deadline = b.deadline;
    this.maxAttempts = b.maxAttempts;
    this.body = body;
  }

  /**
   * Starts a task's definition.
   *
   * @param name 1 to 100 characters: letters, digits, {@code . _ -}, not starting with a sign
   * @param schedule when its slots are
   * @return a builder
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the name is not valid
   */
  public static Builder builder(String name, Schedule schedule) {
    return new Builder(name, schedule);
  }

  /** {@return the name} */
  public String name() {
    return name;
  }

  /** {@return the schedule} */
  public Schedule schedule() {
    return schedule;
  }

  /** {@return what happens to missed slots} */
  public MissedSlots missedSlots() {
    return missedSlots;
  }

  /**
   * {@return how late a slot may start before it counts as missed, as set with
   * {@link Builder#missedAfter}; if not set, {@link #DEFAULT_MISSED_AFTER}, which the time to the
   * next slot shortens}
   */
  public Duration missedAfter() {
    return missedAfter != null ? missedAfter : DEFAULT_MISSED_AFTER;
  }

  /** {@return the lateness set with {@link Builder#missedAfter}, or empty for the default} */
  public Optional<Duration> missedAfterSetting() {
    return Optional.ofNullable(missedAfter);
  }

  /** {@return how many missed slots {@link MissedSlots#RUN_EACH} runs at most} */
  public int catchUpLimit() {
    return catchUpLimit;
  }

  /** {@return what happens to a slot that comes while the previous run still goes} */
  public Overlap overlap() {
    return overlap;
  }

  /** {@return how long a run may take before it is interrupted, if limited} */
  public Optional<Duration> deadline() {
    return Optional.ofNullable(deadline);
  }

  /** {@return how many attempts a slot gets when its runner disconnects (1: no retry)} */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** {@return the code} */
  public TaskBody body() {
    return body;
  }

  @Override
  public String toString() {
    return "Task[" + name + ", " + schedule.describe() + "]";
  }

  /** Settings of a {@link Task}. Each may be set once; bad values throw naming the option and its limit. */
  public static final class Builder {
    private final String name;
    private final Schedule schedule;
    private MissedSlots missedSlots = MissedSlots.SKIP;
    private Duration missedAfter; // null: the default, which depends on the slot
    private int catchUpLimit = DEFAULT_CATCH_UP_LIMIT;
    private Overlap overlap = Overlap.SKIP;
    private Duration deadline;
    private int maxAttempts = 1;
    private final java.util.Set<String> set = new java.util.HashSet<>();

    private Builder(String name, Schedule schedule) {
      Objects.requireNonNull(name, "name");
      if (!NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("task name must be 1 to 100 characters, letters, digits, '.', '_' or '-',"
            + " starting with a letter or digit: \"" + name + "\"");
      }
      this.name = name;
      this.schedule = Objects.requireNonNull(schedule, "schedule");
    }

    private void once(String option) {
      if (!set.add(option)) {
        throw new IllegalStateException(option + " was already set for task " + name);
      }
    }

    /**
     * What to do with missed slots. Default {@link MissedSlots#SKIP}.
     *
     * @param policy the policy
     * @return this builder
     */
    public Builder missedSlots(MissedSlots policy) {
      once("missedSlots");
      missedSlots = Objects.requireNonNull(policy, "missedSlots");
      return this;
    }

    /**
     * How late a slot may be found unclaimed and still run as scheduled; later, it is missed (its
     * policy decides). Default: {@link #DEFAULT_MISSED_AFTER} (10 s), or the time from the slot to
     * the next one if that is shorter, so that a slot whose successor has come is missed: after a
     * restart, a task every second runs from the current second on instead of a burst of the
     * seconds it was down (its policy decides about those). Set it to let slots run later.
     *
     * @param lateness from 1 s to 1 day
     * @return this builder
     */
    public Builder missedAfter(Duration lateness) {
      once("missedAfter");
      missedAfter = check("missedAfter", lateness, Duration.ofSeconds(1), Duration.ofDays(1));
      return this;
    }

    /**
     * The most missed slots {@link MissedSlots#RUN_EACH} runs after a gap (the most recent ones).
     * Default {@link #DEFAULT_CATCH_UP_LIMIT}.
     *
     * @param limit from 1 to 1000
     * @return this builder
     */
    public Builder catchUpLimit(int limit) {
      once("catchUpLimit");
      if (limit < 1 || limit > 1000) {
        throw new IllegalArgumentException("catchUpLimit must be from 1 to 1000: " + limit);
      }
      catchUpLimit = limit;
      return this;
    }

    /**
     * What to do with a slot that comes while the previous run still goes. Default
     * {@link Overlap#SKIP}.
     *
     * @param policy the policy
     * @return this builder
     */
    public Builder overlap(Overlap policy) {
      once("overlap");
      overlap = Objects.requireNonNull(policy, "overlap");
      return this;
    }

    /**
     * How long a run may take: then its thread is interrupted and {@link RunContext#stopRequested()}
     * turns true. Default: no deadline.
     *
     * @param limit from 1 ms to 1 day
     * @return this builder
     */
    public Builder deadline(Duration limit) {
      once("deadline");
      deadline = check("deadline", limit, Duration.ofMillis(1), Duration.ofDays(1));
      return this;
    }

    /**
     * How many attempts a slot gets in all when its runner disconnects mid-run (its process or
     * connection died): the next attempt runs on the node that notices. Default 1: a disconnected
     * run is recorded as {@link RunState#DISCONNECTED} and not run again.
     *
     * @param attempts from 1 to 10
     * @return this builder
     */
    public Builder retryDisconnected(int attempts) {
      once("retryDisconnected");
      if (attempts < 1 || attempts > 10) {
        throw new IllegalArgumentException("retryDisconnected attempts must be from 1 to 10: " + attempts);
      }
      maxAttempts = attempts;
      return this;
    }

    /**
     * Builds the task.
     *
     * @param body the code run for each slot
     * @return the task
     */
    public Task build(TaskBody body) {
      return new Task(this, Objects.requireNonNull(body, "body"));
    }

    private static Duration check(String option, Duration value, Duration min, Duration max) {
      Objects.requireNonNull(value, option);
      if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
        throw new IllegalArgumentException(option + " must be from " + min + " to " + max + ": " + value);
      }
      return value;
    }
  }
}
