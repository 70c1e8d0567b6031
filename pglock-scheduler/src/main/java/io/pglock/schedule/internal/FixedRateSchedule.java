package io.pglock.schedule.internal;

import io.pglock.schedule.Schedule;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** A slot at every multiple of the period since the epoch: every node computes the same ones. */
public final class FixedRateSchedule implements Schedule {
  private final Duration period;
  private final long periodMicros;

  public FixedRateSchedule(Duration period) {
    this.period = Periods.check("fixedRate period", period);
    this.periodMicros = period.toNanos() / 1000;
  }

  @Override
  public Optional<Instant> next(Instant after) {
    long micros = after.getEpochSecond() * 1_000_000L + after.getNano() / 1000;
    long next = (Math.floorDiv(micros, periodMicros) + 1) * periodMicros;
    return Optional.of(Instant.ofEpochSecond(Math.floorDiv(next, 1_000_000L), Math.floorMod(next, 1_000_000L) * 1000));
  }

  @Override
  public boolean fromPreviousEnd() {
    return false;
  }

  @Override
  public String describe() {
    return "every " + Periods.format(period);
  }

  @Override
  public String toString() {
    return describe();
  }
}
