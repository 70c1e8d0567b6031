package io.pglock.bench;

import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.PgLocks;
import io.pglock.PgLocksBuilder;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * B5's cost half: what loss detection costs a process whose locks sit idle. The same JVM idles for
 * {@code --idle-seconds} per window in three set-ups, in the order B H E E H B after an unmeasured
 * 2 s baseline window: B, a plain idle JDBC connection and nothing else (the baseline); H, a
 * {@code PgLocks} (default settings) holding {@link #HELD} locks; E, a {@code PgLocks} whose lock
 * session is open but holds nothing (informational). Goals for H: process CPU at most
 * {@link #MAX_EXTRA_CPU_MS_PER_S} ms per second above B, and no statement on the lock session beyond
 * its heartbeats (one per third of the lease).
 */
final class IdleCost {
  static final int HELD = 4;
  /** "No extra CPU worth measuring": 1 ms of CPU per second is 0.1% of one core. */
  static final double MAX_EXTRA_CPU_MS_PER_S = 1.0;

  private final Db db;
  private final BenchOptions o;
  private final String namespace;
  private final long windowNanos;

  IdleCost(Db db, BenchOptions o, String namespace) {
    this.db = db;
    this.o = o;
    this.namespace = namespace;
    this.windowNanos = (long) (o.idleSeconds() * 1e9);
  }

  void run(Report r) throws Exception {
    List<IdleWindow.Result> base = new ArrayList<>();
    List<IdleWindow.Result> held = new ArrayList<>();
    List<IdleWindow.Result> empty = new ArrayList<>();
    long keyBase = Benchmark.keyBase();
    try (Connection monitor = db.connect(db.runPrefix + "-b5-monitor")) {
      baseline(monitor, 2_000_000_000L); // unmeasured: compiles the sampling code
      base.add(baseline(monitor, windowNanos));
      held.add(pglock(monitor, HELD, keyBase));
      empty.add(pglock(monitor, 0, keyBase + HELD));
      empty.add(pglock(monitor, 0, keyBase + HELD + 1));
      held.add(pglock(monitor, HELD, keyBase + HELD + 2));
      base.add(baseline(monitor, windowNanos));
    }
    double b = mean(base, IdleWindow.Result::processCpuPerSecond);
    double h = mean(held, IdleWindow.Result::processCpuPerSecond);
    double e = mean(empty, IdleWindow.Result::processCpuPerSecond);
    String baseline = Report.fmt("%.2f ms/s (idle JDBC conn)", b);
    r.limit(Report.fmt("JVM CPU idle, %d locks held", HELD), baseline, Report.fmt("%.2f ms/s (pglock threads %.2f)",
        h, mean(held, IdleWindow.Result::pglockThreadsCpuPerSecond)), Report.fmt("<= +%.1f ms/s",
        MAX_EXTRA_CPU_MS_PER_S), h - b <= MAX_EXTRA_CPU_MS_PER_S);
    r.info("JVM CPU idle, session open, no lock", baseline, Report.fmt("%.2f ms/s (pglock threads %.2f)", e,
        mean(empty, IdleWindow.Result::pglockThreadsCpuPerSecond)), Report.fmt("%+.2f ms/s", e - b));
    long heartbeatNanos = PgLocksBuilder.DEFAULT_LEASE.toNanos() / 3;
    int heartbeats = (int) (windowNanos / heartbeatNanos) + 1;
    int statements = held.stream().mapToInt(IdleWindow.Result::statements).max().orElse(0);
    r.limit(Report.fmt("statements in %.0f s idle, %d held", o.idleSeconds(), HELD),
        Integer.toString(base.stream().mapToInt(IdleWindow.Result::statements).max().orElse(0)),
        Integer.toString(statements), Report.fmt("<= %d (heartbeats)", heartbeats), statements <= heartbeats);
    r.note("idle windows of %.1f s, B H E E H B after a 2 s warm-up; CPU ms/s by window: B %s; H %s (pglock "
        + "threads %s); E %s (pglock threads %s)", o.idleSeconds(), perWindow(base,
        IdleWindow.Result::processCpuPerSecond), perWindow(held, IdleWindow.Result::processCpuPerSecond),
        perWindow(held, IdleWindow.Result::pglockThreadsCpuPerSecond), perWindow(empty,
        IdleWindow.Result::processCpuPerSecond), perWindow(empty, IdleWindow.Result::pglockThreadsCpuPerSecond));
    r.note("held - baseline: %+.2f ms of CPU per second (%.3f%% of one core); statements are changes of the "
        + "backend's query_start, sampled every %d ms", h - b, (h - b) / 10, IdleWindow.SAMPLE_NANOS / 1_000_000);
  }

  private IdleWindow.Result baseline(Connection monitor, long window) throws Exception {
    try (Connection idle = db.connect(db.runPrefix + "-b5-idle"); Statement s = idle.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      int pid = rs.getInt(1);
      settle();
      return IdleWindow.measure(monitor, pid, window);
    }
  }

  /** A window with a fresh PgLocks holding {@code count} locks (0: one taken and released). */
  private IdleWindow.Result pglock(Connection monitor, int count, long keyBase) throws Exception {
    try (PgLocks locks = db.pgLocks("b5", b -> b.namespace(namespace))) {
      List<LockHandle> held = new ArrayList<>();
      for (int i = 0; i < Math.max(1, count); i++) {
        held.add(locks.lock(LockKey.of(keyBase + i)).tryAcquire().orElseThrow(
            () -> new IllegalStateException("pglock try-acquire of a free key failed")));
      }
      int pid = Db.holderPid(monitor, "pglock:%" + db.nodeName("b5") + "%", keyBase);
      if (count == 0) {
        held.remove(0).close();
      }
      settle();
      IdleWindow.Result result = IdleWindow.measure(monitor, pid, windowNanos);
      for (LockHandle h : held) {
        if (!h.isHeld()) {
          throw new IllegalStateException("a lock was lost during the idle window: " + h.state());
        }
        h.close();
      }
      return result;
    }
  }

  /** Lets the setup's work (JIT, a collection, a release) finish before a window starts. */
  private static void settle() {
    System.gc();
    LossLatency.parkFor(1_000_000_000L);
  }

  private static double mean(List<IdleWindow.Result> windows, ToDoubleFunction<IdleWindow.Result> f) {
    return windows.stream().mapToDouble(f).average().orElseThrow();
  }

  private static String perWindow(List<IdleWindow.Result> windows, ToDoubleFunction<IdleWindow.Result> f) {
    return B5LossDetection.list(windows.stream().mapToDouble(f).toArray());
  }
}
