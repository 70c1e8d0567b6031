package io.pglock.schedule;

import io.pglock.schedule.internal.CronSchedule;
import io.pglock.schedule.internal.FixedDelaySchedule;
import io.pglock.schedule.internal.FixedRateSchedule;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Optional;

/**
 * When a task's slots are: a cron expression, a fixed rate, or a fixed delay after the previous
 * run. Slots are instants on the database's clock ({@link Scheduler} never uses a node's clock
 * to decide that a slot has come).
 */
public interface Schedule {

  /**
   * A cron expression in UTC; see {@link #cron(String, ZoneId)}.
   *
   * @param expression six fields: second, minute, hour, day of month, month, day of week
   * @return the schedule
   * @throws IllegalArgumentException if the expression is not valid, naming the problem
   */
  static Schedule cron(String expression) {
    return cron(expression, ZoneOffset.UTC);
  }

  /**
   * A cron expression in a time zone, in the Spring format (parsed by cron-utils): six fields,
   * {@code second minute hour day-of-month month day-of-week}, such as {@code "0 30 2 * * *"}
   * (02:30:00 every day) or {@code "*&#47;15 * * * * *"} (every 15 seconds). Daylight-saving
   * changes follow the zone's rules: a time that does not exist that day (in the spring gap) runs
   * at the gap's end, the first valid instant after it; in the autumn overlap slots are instants,
   * so a daily time runs once (at its first occurrence) and an expression that matches several
   * times within the repeated hour matches in both passes of it.
   *
   * @param expression six fields: second, minute, hour, day of month, month, day of week
   * @param zone the zone the fields are read in
   * @return the schedule
   * @throws IllegalArgumentException if the expression is not valid, naming the problem
   */
  static Schedule cron(String expression, ZoneId zone) {
    return new CronSchedule(expression, zone);
  }

  /**
   * A slot every {@code period}, aligned on the epoch of the database's clock: every node computes
   * the same slots ({@code fixedRate(1 min)} runs at each whole minute).
   *
   * @param period from a second to 366 days
   * @return the schedule
   * @throws IllegalArgumentException if out of range
   */
  static Schedule fixedRate(Duration period) {
    return new FixedRateSchedule(period);
  }

  /**
   * A slot {@code delay} after the previous run finished (by the database's clock), whichever node
   * ran it; the first slot when the task is first registered.
   *
   * @param delay from a second to 366 days
   * @return the schedule
   * @throws IllegalArgumentException if out of range
   */
  static Schedule fixedDelay(Duration delay) {
    return new FixedDelaySchedule(delay);
  }

  /**
   * The first slot strictly after an instant.
   *
   * @param after an instant: a slot, or, for a fixed delay, the end of the previous run
   * @return the next slot, or empty if there is none (a cron expression that never matches again)
   */
  Optional<Instant> next(Instant after);

  /** {@return true if slots follow the end of the previous run (a fixed delay), not its slot} */
  boolean fromPreviousEnd();

  /** {@return a short description, such as {@code cron "0 30 2 * * *" Europe/Paris}} */
  String describe();
}
