package io.pglock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * B14's open dashboard: what a browser with some pages open asks of the server. Each page is a tab whose
 * script ({@code dashboard.js}) fetches the page again every refresh interval ({@code setInterval}, with
 * the header {@code X-Pglock-Live: 1}), and skips a tick while its last fetch is still under way: one
 * thread per page, ticking at a fixed rate from a random phase, a tick that comes while the fetch runs
 * skipped. Latencies and failures are kept for the notes.
 */
final class OpenDashboard implements AutoCloseable {
  private final DashboardClient client;
  private final List<String> paths;
  private final long intervalNanos;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> threads = new ArrayList<>();
  private final List<Double> millis = new ArrayList<>();
  private final List<String> failures = new ArrayList<>();
  private int skipped;

  OpenDashboard(DashboardClient client, List<String> paths, Duration interval) {
    this.client = client;
    this.paths = List.copyOf(paths);
    this.intervalNanos = interval.toNanos();
  }

  /** Opens the pages: each one's first refresh comes at a random moment within the first interval. */
  OpenDashboard open() {
    for (String path : paths) {
      Thread t = new Thread(() -> poll(path), "b14-tab-" + path);
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
    return this;
  }

  private void poll(String path) {
    long next = System.nanoTime() + ThreadLocalRandom.current().nextLong(intervalNanos);
    while (!stop.get()) {
      long wait = next - System.nanoTime();
      if (wait > 0) {
        LockSupport.parkNanos(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(50)));
        continue;
      }
      try {
        DashboardClient.Answer a = client.get(path, true);
        synchronized (this) {
          millis.add(a.millis());
          if (a.status() != 200) {
            failures.add(path + ": HTTP " + a.status());
          }
        }
      } catch (Exception e) {
        if (stop.get()) {
          return;
        }
        synchronized (this) {
          failures.add(path + ": " + e);
        }
      }
      next += intervalNanos;
      long now = System.nanoTime();
      while (next <= now) {
        next += intervalNanos;
        synchronized (this) {
          skipped++;
        }
      }
    }
  }

  /** {@return the latencies of the refreshes so far, in ms} */
  synchronized double[] millis() {
    return millis.stream().mapToDouble(Double::doubleValue).toArray();
  }

  synchronized List<String> failures() {
    return List.copyOf(failures);
  }

  synchronized int skipped() {
    return skipped;
  }

  @Override
  public void close() throws InterruptedException {
    stop.set(true);
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(70));
    }
  }
}
