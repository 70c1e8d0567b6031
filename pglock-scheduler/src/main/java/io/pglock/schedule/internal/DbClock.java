package io.pglock.schedule.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;

/**
 * The database's clock as seen from this node: the database's {@code clock_timestamp()} at the
 * last measurement plus the time elapsed since, by this node's monotonic clock
 * ({@link System#nanoTime()}). The node's wall clock plays no part, so a wrong or stepped wall
 * clock changes nothing; half the measurement's round trip is the error. Slots are decided by the
 * database anyway (a claim requires {@code slot <= now()}); this only decides when to wake up.
 */
final class DbClock {
  /** One measurement: the two values are read together (run threads read the clock too). */
  private record Reading(Instant db, long nanos) {}

  private volatile Reading last;

  /** Measures: {@code readDbNow} runs one {@code SELECT clock_timestamp()} (call it on an idle connection). */
  void measure(Callable<Instant> readDbNow) throws Exception {
    long t0 = System.nanoTime();
    Instant db = readDbNow.call();
    long t1 = System.nanoTime();
    last = new Reading(db, t0 + (t1 - t0) / 2);
  }

  boolean measured() {
    return last != null;
  }

  Instant now() {
    Reading r = last;
    return r.db().plusNanos(System.nanoTime() - r.nanos());
  }

  /** How long from now until the database's clock shows {@code at}; negative if past. */
  Duration until(Instant at) {
    return Duration.between(now(), at);
  }
}
