package io.pglock.queue;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/** How long a failed job waits before its next attempt. */
@FunctionalInterface
public interface Backoff {

  /**
   * {@return the wait before the next attempt}
   *
   * @param attempt the number of the attempt that just failed, from 1
   */
  Duration delay(int attempt);

  /**
   * Exponential backoff with jitter: {@code min(max, initial * 2^(attempt-1))}, then a random point
   * in its upper half, so that jobs that failed together (an outage) do not all come back together.
   *
   * @throws IllegalArgumentException if initial is not positive or max is less than initial
   * @param initial the first wait
   * @param max the longest wait
   * @return the backoff
   */
  static Backoff exponential(Duration initial, Duration max) {
    if (initial == null || initial.isZero() || initial.isNegative() || max == null || max.compareTo(initial) < 0) {
      throw new IllegalArgumentException("exponential backoff needs 0 < initial <= max, got " + initial + " and " + max);
    }
    long initialMs = initial.toMillis();
    long maxMs = max.toMillis();
    return attempt -> {
      int doublings = Math.max(0, Math.min(62, attempt - 1));
      long full = doublings >= 62 || initialMs > (maxMs >> doublings) ? maxMs : Math.min(maxMs, initialMs << doublings);
      long half = full / 2;
      return Duration.ofMillis(half + ThreadLocalRandom.current().nextLong(full - half + 1));
    };
  }

  /** {@return the default: {@link #exponential} from 1 second up to 1 hour} */
  static Backoff standard() {
    return exponential(Duration.ofSeconds(1), Duration.ofHours(1));
  }
}
