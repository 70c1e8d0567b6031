package io.pglock.testing;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waits for a condition with a deadline, the one way tests synchronise: never a bare sleep, which
 * is too short on a loaded machine and too long on an idle one.
 */
public final class Await {
  /** How often the condition is looked at. */
  public static final Duration POLL = Duration.ofMillis(5);

  private Await() {}

  /**
   * Returns as soon as the condition holds.
   *
   * @param what what is waited for, for the failure message
   * @param timeout the longest to wait
   * @param condition looked at every {@link #POLL} until it holds
   * @throws AssertionError naming {@code what} if the timeout passes first, or if the thread is
   *     interrupted (the flag stays set)
   */
  public static void until(String what, Duration timeout, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      LockSupport.parkNanos(POLL.toNanos());
      if (Thread.currentThread().isInterrupted()) {
        throw new AssertionError("interrupted waiting for " + what);
      }
    }
  }
}
