package io.pglock.schedule.internal;

import java.time.Duration;
import java.util.Objects;

/** Checks and formats the periods of fixed-rate and fixed-delay schedules. */
final class Periods {
  private static final Duration MIN = Duration.ofSeconds(1);
  private static final Duration MAX = Duration.ofDays(366);

  private Periods() {}

  static Duration check(String what, Duration d) {
    Objects.requireNonNull(d, what);
    if (d.compareTo(MIN) < 0 || d.compareTo(MAX) > 0) {
      throw new IllegalArgumentException(what + " must be from " + MIN + " to " + MAX + ": " + d);
    }
    if (d.getNano() % 1000 != 0) {
      throw new IllegalArgumentException(what + " must be whole microseconds (the database's precision): " + d);
    }
    return d;
  }

  static String format(Duration d) {
    return d.toString().substring(2).toLowerCase(java.util.Locale.ROOT);
  }
}
