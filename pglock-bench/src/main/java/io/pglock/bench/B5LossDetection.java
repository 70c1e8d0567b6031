package io.pglock.bench;

import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.PgLocks;
import io.pglock.PgLocksBuilder;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * B5: instant loss detection. Latency: an idle lock session (default lease, 30 s) whose backend an
 * administrator terminates ({@code pg_terminate_backend} from another connection): time from just
 * before the terminate call to the handle's {@code state()} being {@code LOST}, p50/p99/max over
 * {@code --trials} trials. Goal: p50 at most 50 ms. There is no raw-JDBC peer (a raw idle
 * connection notices nothing until its next statement); the baseline column gives what detection
 * at the heartbeat alone gives (within a third of the lease).
 *
 * <p>Cost: the same JVM idle for {@code --idle-seconds}, once with a plain idle JDBC connection
 * (baseline) and once with a {@code PgLocks} holding {@link #IDLE_LOCKS} locks, in the order B P P B
 * after an unmeasured 2 s baseline window.
 * Goals: process CPU per second at most {@link #MAX_EXTRA_CPU_MS_PER_S} ms above the baseline, and
 * no statement on the lock session beyond its heartbeats.
 */
final class B5LossDetection implements Benchmark {
  static final double GOAL_P50_MS = 50;
  static final int IDLE_LOCKS = 4;
  /** "No extra CPU worth measuring": 1 ms of CPU per second is 0.1% of one core. */
  static final double MAX_EXTRA_CPU_MS_PER_S = 1.0;
  /** How long a lock session stays idle after its acquire before its backend is terminated. */
  static final Duration IDLE_BEFORE_TERMINATE = Duration.ofMillis(200);
  static final String NAMESPACE = "pglock-bench-b5";

  @Override
  public String id() {
    return "B5";
  }

  @Override
  public String title() {
    return "instant loss detection: pg_terminate_backend to LOST on an idle session, and its idle cost";
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    Report r = new Report(id(), title());
    latency(db, o, r);
    idleCost(db, o, r);
    return r;
  }

  private void latency(Db db, BenchOptions o, Report r) throws Exception {
    // The namespace may appear in application_name next to the node name: match the node anywhere
    // after "pglock:"; the backend must also hold the trial's key, so only this run's session matches.
    String appPattern = "pglock:%" + db.nodeName("b5") + "%";
    LossLatency.Result res;
    Duration lease;
    try (PgLocks locks = db.pgLocks("b5", b -> b.namespace(NAMESPACE))) {
      lease = locks.config().lease();
      Duration timeout = lease.plusSeconds(5);
      res = new LossLatency(db, locks, appPattern, IDLE_BEFORE_TERMINATE, timeout).run(o.trials(),
          Benchmark.keyBase());
    }
    double heartbeatMs = lease.toMillis() / 3.0;
    String heartbeat = Report.fmt("<= %.0f ms (heartbeat, lease/3)", heartbeatMs);
    double p50 = res.percentile(0.50);
    double p99 = res.percentile(0.99);
    double max = res.percentile(1.0);
    int n = o.trials();
    r.limit(Report.fmt("terminate to LOST, p50 of %d", n), heartbeat, ms(p50), Report.fmt("<= %.0f ms", GOAL_P50_MS),
        p50 <= GOAL_P50_MS);
    r.info(Report.fmt("terminate to LOST, p99 / max of %d", n), heartbeat, ms(p99) + " / " + ms(max), "-");
    r.note("lease %s (default), session idle %d ms before each terminate; trial timeout %s; timed out: %d of %d",
        lease, IDLE_BEFORE_TERMINATE.toMillis(), lease.plusSeconds(5), res.timedOut(), n);
    r.note("ms to state() LOST by trial: %s", list(res.stateLost()));
    r.note("ms to lost() completing (on the callback executor): p50 %s, max %s; causes %s",
        ms(LossLatency.percentile(res.lostCompleted(), 0.5)), ms(LossLatency.percentile(res.lostCompleted(), 1.0)),
        res.causes());
    r.note("pg_terminate_backend call itself: %.2f ms on average (included in the figures)",
        res.terminateCallMillis());
  }

  private void idleCost(Db db, BenchOptions o, Report r) throws Exception {
    long window = (long) (o.idleSeconds() * 1e9);
    List<IdleWindow.Result> base = new ArrayList<>();
    List<IdleWindow.Result> pg = new ArrayList<>();
    long keyBase = Benchmark.keyBase();
    try (Connection monitor = db.connect(db.runPrefix + "-b5-monitor")) {
      baselineWindow(db, monitor, 2_000_000_000L); // unmeasured: compiles the sampling code
      for (int round = 0; round < 2; round++) {
        if (round % 2 == 0) {
          base.add(baselineWindow(db, monitor, window));
          pg.add(pglockWindow(db, monitor, window, keyBase + round * IDLE_LOCKS));
        } else {
          pg.add(pglockWindow(db, monitor, window, keyBase + round * IDLE_LOCKS));
          base.add(baselineWindow(db, monitor, window));
        }
      }
    }
    double b = mean(base.stream().mapToDouble(IdleWindow.Result::processCpuPerSecond).toArray());
    double p = mean(pg.stream().mapToDouble(IdleWindow.Result::processCpuPerSecond).toArray());
    double threads = mean(pg.stream().mapToDouble(IdleWindow.Result::pglockThreadsCpuPerSecond).toArray());
    r.limit(Report.fmt("JVM CPU idle, %d locks held", IDLE_LOCKS), Report.fmt("%.2f ms/s (idle JDBC conn)", b),
        Report.fmt("%.2f ms/s (pglock threads %.2f)", p, threads), Report.fmt("<= +%.1f ms/s", MAX_EXTRA_CPU_MS_PER_S),
        p - b <= MAX_EXTRA_CPU_MS_PER_S);
    Duration lease = PgLocksBuilder.DEFAULT_LEASE;
    int heartbeats = (int) (o.idleSeconds() / (lease.toMillis() / 3000.0)) + 1;
    int maxStatements = pg.stream().mapToInt(IdleWindow.Result::statements).max().orElse(0);
    int baseStatements = base.stream().mapToInt(IdleWindow.Result::statements).max().orElse(0);
    r.limit(Report.fmt("statements in %.0f s idle", o.idleSeconds()), Integer.toString(baseStatements),
        Integer.toString(maxStatements), Report.fmt("<= %d (heartbeats)", heartbeats), maxStatements <= heartbeats);
    r.note("idle windows of %.1f s, B P P B after a 2 s warm-up; CPU ms/s by window, baseline: %s; pglock: %s (pglock threads: %s)",
        o.idleSeconds(), list(base.stream().mapToDouble(IdleWindow.Result::processCpuPerSecond).toArray()),
        list(pg.stream().mapToDouble(IdleWindow.Result::processCpuPerSecond).toArray()),
        list(pg.stream().mapToDouble(IdleWindow.Result::pglockThreadsCpuPerSecond).toArray()));
    r.note("difference pglock - baseline: %+.2f ms of CPU per second (%.3f%% of one core); statements are "
        + "query_start changes sampled every %d ms", p - b, (p - b) / 10, IdleWindow.SAMPLE_NANOS / 1_000_000);
  }

  private static IdleWindow.Result baselineWindow(Db db, Connection monitor, long window) throws Exception {
    try (Connection idle = db.connect(db.runPrefix + "-b5-idle"); Statement s = idle.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      int pid = rs.getInt(1);
      settle();
      return IdleWindow.measure(monitor, pid, window);
    }
  }

  private static IdleWindow.Result pglockWindow(Db db, Connection monitor, long window, long keyBase)
      throws Exception {
    try (PgLocks locks = db.pgLocks("b5", b -> b.namespace(NAMESPACE))) {
      List<LockHandle> held = new ArrayList<>();
      for (int i = 0; i < IDLE_LOCKS; i++) {
        held.add(locks.lock(LockKey.of(keyBase + i)).tryAcquire().orElseThrow(
            () -> new IllegalStateException("pglock try-acquire of a free key failed")));
      }
      int pid = Db.holderPid(monitor, "pglock:%" + db.nodeName("b5") + "%", keyBase);
      settle();
      IdleWindow.Result result = IdleWindow.measure(monitor, pid, window);
      for (LockHandle h : held) {
        if (!h.isHeld()) {
          throw new IllegalStateException("a lock was lost during the idle window: " + h.state());
        }
        h.close();
      }
      return result;
    }
  }

  /** Lets the setup's work (JIT, a collection) finish before a window starts. */
  private static void settle() {
    System.gc();
    LossLatency.parkFor(1_000_000_000L);
  }

  private static String ms(double millis) {
    return Double.isInfinite(millis) ? "timeout" : millis >= 1000 ? Report.fmt("%.0f ms", millis)
        : Report.fmt("%.1f ms", millis);
  }

  private static String list(double[] values) {
    StringBuilder b = new StringBuilder();
    for (double v : values) {
      b.append(b.length() == 0 ? "" : " ").append(Double.isInfinite(v) ? "timeout" : Report.fmt("%.1f", v));
    }
    return b.toString();
  }

  private static double mean(double[] values) {
    double s = 0;
    for (double v : values) {
      s += v;
    }
    return s / values.length;
  }
}
