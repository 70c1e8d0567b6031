package io.pglock.bench;

/** B9: one system's way of running the per-second task on one node ({@link PglockTicker}, {@link ShedLockTicker}). */
interface Ticker extends AutoCloseable {
  /** Starts running the task; returns at once. */
  void start() throws Exception;

  /** Stops running it and lets go of every connection. */
  @Override
  void close();
}
