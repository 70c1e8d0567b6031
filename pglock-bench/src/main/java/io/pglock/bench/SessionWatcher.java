package io.pglock.bench;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Samples, every 100 ms on its own connection, how many connections in {@code pg_stat_activity}
 * match an application_name pattern, and keeps the peak. Costs one small query per sample.
 */
final class SessionWatcher implements AutoCloseable {
  private final Connection monitor;
  private final String pattern;
  private final AtomicInteger peak = new AtomicInteger();
  private final Thread thread;
  private volatile boolean stop;
  private volatile SQLException failure;

  SessionWatcher(Db db, String pattern) throws SQLException {
    this.monitor = db.connect(db.runPrefix + "-monitor");
    this.pattern = pattern;
    this.thread = new Thread(this::loop, "session-watcher");
    this.thread.setDaemon(true);
    this.thread.start();
  }

  private void loop() {
    while (!stop) {
      try {
        sample();
        Thread.sleep(100);
      } catch (SQLException e) {
        failure = e;
        return;
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Takes a sample now (also called by the benchmark at moments that matter). */
  synchronized int sample() throws SQLException {
    int n = Db.countSessions(monitor, pattern);
    peak.accumulateAndGet(n, Math::max);
    return n;
  }

  int peak() throws SQLException {
    if (failure != null) {
      throw failure;
    }
    return peak.get();
  }

  @Override
  public void close() throws SQLException {
    stop = true;
    thread.interrupt();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    monitor.close();
  }
}
