package io.pglock.bench;

import io.pglock.PgLocks;
import java.time.Duration;

/**
 * B5: instant loss detection. Latency: an idle lock session (default lease, 30 s) whose backend an
 * administrator terminates ({@code pg_terminate_backend} from another connection): time from just
 * before the terminate call to the handle's {@code state()} being {@code LOST}, p50/p99/max over
 * {@code --trials} trials. Goal: p50 at most 50 ms. There is no raw-JDBC peer (a raw idle
 * connection notices nothing until its next statement); the baseline column gives what detection
 * at the heartbeat alone gives (within a third of the lease).
 *
 * <p>Cost: see {@link IdleCost}.
 */
final class B5LossDetection implements Benchmark {
  static final double GOAL_P50_MS = 50;
  /**
   * How long a lock session stays idle after its acquire before its backend is terminated: this,
   * plus a random time up to {@link #IDLE_JITTER}.
   */
  static final Duration IDLE_BEFORE_TERMINATE = Duration.ofMillis(200);
  static final Duration IDLE_JITTER = Duration.ofMillis(100);
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
    new IdleCost(db, o, NAMESPACE).run(r);
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
      res = new LossLatency(db, locks, appPattern, IDLE_BEFORE_TERMINATE, IDLE_JITTER, timeout)
          .run(o.trials(), Benchmark.keyBase());
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
    r.note("lease %s (default), session idle %d to %d ms (random) before each terminate; trial timeout %s; "
        + "timed out: %d of %d", lease, IDLE_BEFORE_TERMINATE.toMillis(), IDLE_BEFORE_TERMINATE.plus(IDLE_JITTER)
        .toMillis(), lease.plusSeconds(5), res.timedOut(), n);
    r.note("ms to state() LOST by trial: %s", list(res.stateLost()));
    r.note("ms to lost() completing (on the callback executor): p50 %s, max %s; causes %s",
        ms(LossLatency.percentile(res.lostCompleted(), 0.5)), ms(LossLatency.percentile(res.lostCompleted(), 1.0)),
        res.causes());
    r.note("pg_terminate_backend call itself: %.2f ms on average (included in the figures)",
        res.terminateCallMillis());
  }

  static String ms(double millis) {
    return Double.isInfinite(millis) ? "timeout" : millis >= 1000 ? Report.fmt("%.0f ms", millis)
        : Report.fmt("%.1f ms", millis);
  }

  static String list(double[] values) {
    StringBuilder b = new StringBuilder();
    for (double v : values) {
      b.append(b.length() == 0 ? "" : " ").append(Double.isInfinite(v) ? "timeout" : Report.fmt("%.1f", v));
    }
    return b.toString();
  }
}
