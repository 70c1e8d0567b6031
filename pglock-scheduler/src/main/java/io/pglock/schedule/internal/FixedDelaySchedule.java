package io.pglock.schedule.internal;

import io.pglock.schedule.Schedule;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** A slot a fixed delay after the previous run's end (truncated to microseconds, the database's precision). */
public final class FixedDelaySchedule implements Schedule {
  private final Duration delay;

  public FixedDelaySchedule(Duration delay) {
    this.delay = Periods.check("fixedDelay delay", delay);
  }

  @Override
  public Optional<Instant> next(Instant previousEnd) {
    Instant next = previousEnd.plus(delay);
    return Optional.of(next.minusNanos(next.getNano() % 1000));
  }

  @Override
  public boolean fromPreviousEnd() {
    return true;
  }

  @Override
  public String describe() {
    return Periods.format(delay) + " after each run";
  }

  @Override
  public String toString() {
    return describe();
  }
}
