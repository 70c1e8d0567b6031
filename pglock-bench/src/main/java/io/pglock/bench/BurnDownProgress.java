package io.pglock.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The clock of one burn-down and what every contender's no-op handler does: {@link #handled()}
 * counts the call and notes when it happened. All contenders' handlers do exactly this (an atomic
 * increment, an array store and a latch count-down), so that the job costs the same everywhere.
 *
 * <p>Waiting for the end takes two steps: the latch says, without polling, when the last handler
 * has run; then {@link #awaitRecorded} polls the system's own tables for the last few completions
 * to be committed (a handler returns before its system records the job done).
 */
final class BurnDownProgress {
  /** Between two looks at a peer's table at the end: short, as the end falls within a few ms. */
  private static final long RECORDED_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  /** A pause between two handled jobs at least this long counts as one in {@link BurnDownContender.BurnDown}. */
  static final Duration PAUSE = Duration.ofMillis(100);

  private final int jobs;
  private final CountDownLatch left;
  private final AtomicInteger handled = new AtomicInteger();
  /**
   * When each of the first {@code jobs} calls happened ({@code System.nanoTime()}), in the order of
   * the count, each slot written by one call: the pauses in the burn-down (a queue that waits for its
   * next poll) show only here, not in the total. Read after the latch, which publishes the writes.
   */
  private final long[] times;
  private volatile long startNanos;

  BurnDownProgress(int jobs) {
    this.jobs = jobs;
    this.left = new CountDownLatch(jobs);
    this.times = new long[jobs];
  }

  /** Starts the clock: call just before the call that starts the workers. */
  void start() {
    startNanos = System.nanoTime();
  }

  /** The no-op job: what each contender's handler calls, and nothing else. */
  void handled() {
    long now = System.nanoTime();
    int n = handled.incrementAndGet();
    if (n <= times.length) {
      times[n - 1] = now;
    }
    left.countDown();
  }

  int handledCount() {
    return handled.get();
  }

  /**
   * Returns when the handler has run for every job. Throws if a whole {@code stall} passes without
   * a single job handled (so a queue that is stuck fails in bounded time, a slow one does not).
   */
  void awaitHandled(Duration stall) throws InterruptedException {
    int seen = 0;
    while (!left.await(stall.toMillis(), TimeUnit.MILLISECONDS)) {
      int now = handled.get();
      if (now == seen) {
        throw new IllegalStateException(Report.fmt("no job handled for %d s: %d of %d handled",
            stall.toSeconds(), now, jobs));
      }
      seen = now;
    }
  }

  /**
   * Polls {@code sql}, a query of one boolean row, on {@code c} until it says true, and returns the
   * {@code System.nanoTime()} at which it did: the moment the last job is seen recorded done.
   */
  static long awaitRecorded(Connection c, String sql, Duration timeout) throws SQLException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    try (Statement s = c.createStatement()) {
      while (true) {
        try (ResultSet rs = s.executeQuery(sql)) {
          rs.next();
          if (rs.getBoolean(1)) {
            return System.nanoTime();
          }
        }
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException("every job handled, but not recorded done within " + timeout + ": " + sql);
        }
        LockSupport.parkNanos(RECORDED_POLL_NANOS);
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
      }
    }
  }

  /**
   * The figures, the end being {@code doneNanos} (from {@link #awaitRecorded}); call after
   * {@link #awaitHandled} returned.
   */
  BurnDownContender.BurnDown result(long doneNanos) {
    long[] t = times.clone();
    Arrays.sort(t);
    long longest = 0;
    int pauses = 0;
    long paused = 0;
    for (int i = 1; i < t.length; i++) {
      long gap = t[i] - t[i - 1];
      longest = Math.max(longest, gap);
      if (gap >= PAUSE.toNanos()) {
        pauses++;
        paused += gap;
      }
    }
    return new BurnDownContender.BurnDown(jobs, handled.get(), since(t[0]), since(t[t.length - 1]), since(doneNanos),
        Duration.ofNanos(longest), pauses, Duration.ofNanos(paused));
  }

  private Duration since(long nanos) {
    return Duration.ofNanos(nanos - startNanos);
  }
}
