package io.pglock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs a cycle on N threads without pause and counts completed cycles in a measured window. The
 * threads start, run a short ramp (not counted), the window is measured by snapshots of the
 * per-thread counters, then the threads stop after their current cycle.
 */
final class Load {
  private Load() {}

  /** One cycle of one thread. */
  @FunctionalInterface
  interface Cycle {
    void run(int thread) throws Exception;
  }

  /** Per-thread setup, returning that thread's cycle (for per-thread connections or locks). */
  @FunctionalInterface
  interface PerThread {
    Cycle cycle(int thread) throws Exception;
  }

  /** What one window measured. */
  record Window(double seconds, long cycles, long[] perThread) {
    double perSecond() {
      return cycles / seconds;
    }

    double microsPerCycle() {
      return seconds * 1e6 / cycles;
    }

    long minThread() {
      long m = Long.MAX_VALUE;
      for (long n : perThread) {
        m = Math.min(m, n);
      }
      return m;
    }

    long maxThread() {
      long m = 0;
      for (long n : perThread) {
        m = Math.max(m, n);
      }
      return m;
    }
  }

  /** A counter on its own cache lines, written by one thread. */
  @SuppressWarnings("unused")
  private static final class Counter {
    long p1, p2, p3, p4, p5, p6, p7;
    volatile long n;
    long q1, q2, q3, q4, q5, q6, q7;
  }

  static Window run(int threads, long rampNanos, long windowNanos, String name, Cycle cycle) throws Exception {
    return run(threads, rampNanos, windowNanos, name, t -> cycle);
  }

  static Window run(int threads, long rampNanos, long windowNanos, String name, PerThread setup)
      throws Exception {
    Counter[] counters = new Counter[threads];
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> workers = new ArrayList<>(threads);
    var stop = new java.util.concurrent.atomic.AtomicBoolean();
    for (int t = 0; t < threads; t++) {
      int idx = t;
      Counter c = counters[t] = new Counter();
      Thread w = new Thread(() -> {
        try {
          Cycle cycle = setup.cycle(idx);
          while (!stop.get()) {
            cycle.run(idx);
            c.n = c.n + 1;
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
          stop.set(true);
        }
      }, name + "-" + t);
      w.setDaemon(true);
      workers.add(w);
    }
    workers.forEach(Thread::start);
    try {
      sleep(rampNanos, failure);
      long[] before = snapshot(counters);
      long t0 = System.nanoTime();
      sleep(windowNanos, failure);
      long[] after = snapshot(counters);
      long t1 = System.nanoTime();
      long[] per = new long[threads];
      long total = 0;
      for (int t = 0; t < threads; t++) {
        per[t] = after[t] - before[t];
        total += per[t];
      }
      return new Window((t1 - t0) / 1e9, total, per);
    } finally {
      stop.set(true);
      for (Thread w : workers) {
        w.join(60_000);
        if (w.isAlive()) {
          throw new IllegalStateException(w.getName() + " did not stop within 60 s");
        }
      }
      Throwable e = failure.get();
      if (e != null) {
        throw new IllegalStateException(name + " failed: " + e, e);
      }
    }
  }

  private static long[] snapshot(Counter[] counters) {
    long[] s = new long[counters.length];
    for (int i = 0; i < counters.length; i++) {
      s[i] = counters[i].n;
    }
    return s;
  }

  private static void sleep(long nanos, AtomicReference<Throwable> failure) {
    long until = System.nanoTime() + nanos;
    long left;
    while ((left = until - System.nanoTime()) > 0 && failure.get() == null) {
      LockSupport.parkNanos(Math.min(left, 50_000_000L));
    }
    if (failure.get() != null) {
      throw new IllegalStateException("a worker failed: " + failure.get(), failure.get());
    }
  }
}
