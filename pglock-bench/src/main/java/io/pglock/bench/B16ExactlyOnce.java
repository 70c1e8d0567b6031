package io.pglock.bench;

import io.pglock.bench.B10Report.Outcome;
import io.pglock.queue.ClaimMode;
import io.pglock.queue.JobWorkerBuilder;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntUnaryOperator;
import javax.sql.DataSource;

/**
 * B16: what exactly-once costs. B10's burn-down ({@link PglockBurnDown}: advisory mode, a HikariCP pool of
 * B10's size, {@value #CONCURRENCY} handler threads, jobs queued beforehand on a queue of its own in
 * {@code pglock.job}) with handlers that write: each job's payload is a key 0..999 and its handler adds 1 to
 * that key's row of a counter table of its contender's own (1,000 rows), three ways:
 *
 * <ul>
 *   <li>(a) at least once: a plain {@code handler(...)} borrows a connection of the pool and runs
 *       {@code UPDATE counter SET n = n + 1 WHERE key = ?} in auto-commit (a handler unaware of
 *       redelivery);
 *   <li>(b) at least once, idempotent: a plain handler that, in one transaction, inserts the job's id into an
 *       idempotency table of its own ({@code ON CONFLICT DO NOTHING}) and, if the row went in, runs the
 *       UPDATE, then commits (what docs/queue.md recommended before handlers in a transaction);
 *   <li>(c) exactly once: {@code handlerInTransaction(...)} runs the same UPDATE on the connection it is
 *       given; the worker records the job's success in that transaction and commits it.
 * </ul>
 *
 * <p>The contenders run one after the other in passes (a, b, c, a, b, c), after an unmeasured warm-up of
 * {@value #WARM_UP_JOBS} jobs each ({@value #MIN_PASSES} passes, or --rounds / 5 if more); the figure is each
 * contender's median jobs/s over the passes, and the
 * ratios c/a and c/b are informational (no goal). After every burn-down the counter table's total must be
 * the number of jobs (an error otherwise). The counter and idempotency tables live in a schema of the
 * run's own, {@code b16_<pid>}, dropped at the end; the queues' rows are deleted as in B10.
 */
final class B16ExactlyOnce implements Benchmark {
  static final int FULL_JOBS = 20_000;
  /** With fewer than {@link B10BurnDown#SHORT_BELOW_TRIALS} {@code --trials} (the CI's short run). */
  static final int SHORT_JOBS = 2_000;
  static final int CONCURRENCY = 8;
  static final int KEYS = 1_000;
  /** Passes at least (more with {@code --rounds} above 14: rounds / 5, as B13's burn-down pairs). */
  static final int MIN_PASSES = 2;
  /** Jobs of the unmeasured burn-down each contender runs first (the queue's code is not warm yet). */
  static final int WARM_UP_JOBS = 1_000;

  /** The three ways, in the order they run in each pass. */
  enum Way {
    AT_LEAST_ONCE("a", "at least once", "pooled connection, UPDATE in auto-commit"),
    IDEMPOTENT("b", "at least once, idempotent",
        "pooled connection, one transaction: INSERT idempotency record ON CONFLICT DO NOTHING, UPDATE if inserted,"
            + " commit"),
    EXACTLY_ONCE("c", "exactly once", "UPDATE on the given connection, committed with the job's success");

    final String letter;
    final String label;
    final String what;

    Way(String letter, String label, String what) {
      this.letter = letter;
      this.label = label;
      this.what = what;
    }
  }

  @Override
  public String id() {
    return "B16";
  }

  @Override
  public String title() {
    return "what exactly-once costs: burn-down of jobs that add 1 to a counter row, at least once (a), at least once"
        + " with an idempotency record (b), handler in a transaction (c)";
  }

  static int passes(BenchOptions o) {
    return Math.max(MIN_PASSES, o.rounds() / 5);
  }

  static int jobs(BenchOptions o) {
    return o.trials() < B10BurnDown.SHORT_BELOW_TRIALS ? SHORT_JOBS : FULL_JOBS;
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    int jobs = jobs(o);
    long pid = ProcessHandle.current().pid();
    String schema = "b16_" + pid;
    Report r = new Report(id(), title());
    int passes = passes(o);
    double[][] perSecond = new double[Way.values().length][passes];
    List<String> sums = new ArrayList<>();
    try (Connection monitor = db.connect(db.runPrefix + "-monitor-b16")) {
      try {
        createTables(monitor, schema);
        for (int pass = -1; pass < passes; pass++) {
          int n = pass < 0 ? Math.min(jobs, WARM_UP_JOBS) : jobs;
          for (Way way : Way.values()) {
            resetTables(monitor, schema, way);
            PglockBurnDown c = new PglockBurnDown(db, CONCURRENCY, ClaimMode.ADVISORY, "b16-" + way.letter,
                "b16-" + pid + "-" + way.letter, "pglock advisory, (" + way.letter + ") " + way.label,
                QueueInstrumentation.NONE, PglockBurnDown.SCHEMA, handler(schema, way));
            Outcome out = B10BurnDown.runOne(db, c, n, monitor);
            if (out.error() != null) {
              throw new IllegalStateException("B16 burn-down failed, " + out.name() + ": " + out.error());
            }
            long sum = counterSum(monitor, schema, way);
            String check = Report.fmt("(%s) %s: sum of n = %,d, jobs %,d: %s", way.letter, pass < 0 ? "warm-up" : "pass "
                + (pass + 1), sum, n, sum == n ? "OK" : "WRONG");
            System.out.printf("    %s%n", check);
            sums.add(check);
            if (sum != n) {
              r.errors.add("counter total is not the number of jobs: " + check);
            }
            if (pass >= 0) {
              perSecond[way.ordinal()][pass] = out.burnDown().jobsPerSecond();
            }
            if (pass == 0) {
              r.note("(%s) %s: %s", way.letter, way.label, c.settings());
            }
          }
        }
      } finally {
        try (Statement s = monitor.createStatement()) {
          s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
      }
    }
    double a = median(perSecond[Way.AT_LEAST_ONCE.ordinal()]);
    double b = median(perSecond[Way.IDEMPOTENT.ordinal()]);
    double c = median(perSecond[Way.EXACTLY_ONCE.ordinal()]);
    String measure = Report.fmt("jobs/s, %,d jobs (+1 on a counter row), concurrency %d, advisory", jobs, CONCURRENCY);
    r.info(measure + ": (c) / (a)", Report.fmt("%,.0f/s at least once", a), Report.fmt("%,.0f/s exactly once", c),
        Report.fmt("%.2fx", c / a));
    r.info(measure + ": (c) / (b)", Report.fmt("%,.0f/s idempotent", b), Report.fmt("%,.0f/s exactly once", c),
        Report.fmt("%.2fx", c / b));
    for (Way way : Way.values()) {
      double m = median(perSecond[way.ordinal()]);
      r.note("(%s) %s: %s jobs/s over %d passes, median %,.0f (%d threads / jobs/s = %.0f us per job): %s", way.letter,
          way.label, fmtAll(perSecond[way.ordinal()]), passes, m, CONCURRENCY, CONCURRENCY * 1e6 / m, way.what);
    }
    r.note("passes: after an unmeasured warm-up of %,d jobs each, the contenders one after the other, a b c in each"
        + " pass; each burn-down on a queue of its own (b16-<pid>-a, -b, -c), its rows deleted and VACUUM %s before"
        + " and after; each contender's counter table (%d rows, n = 0) and (b) its idempotency table emptied before"
        + " each burn-down; tables in schema %s, dropped at the end", Math.min(jobs, WARM_UP_JOBS), PglockBurnDown.TABLE,
        KEYS, schema);
    r.note("counter totals (every job added 1 once, whatever the way; no fault is injected here): %s",
        String.join("; ", sums));
    return r;
  }

  private static String fmtAll(double[] values) {
    StringBuilder s = new StringBuilder();
    for (double v : values) {
      s.append(s.length() == 0 ? "" : ", ").append(Report.fmt("%,.0f", v));
    }
    return s.toString();
  }

  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  private static String counter(String schema, Way way) {
    return schema + ".counter_" + way.letter;
  }

  private static String idempotency(String schema) {
    return schema + ".done_b";
  }

  private static void createTables(Connection c, String schema) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
      for (Way way : Way.values()) {
        s.execute("CREATE TABLE " + counter(schema, way) + " (key int PRIMARY KEY, n bigint NOT NULL)");
      }
      s.execute("CREATE TABLE " + idempotency(schema) + " (job_id bigint PRIMARY KEY)");
    }
  }

  /** The contender's counter back to {@value #KEYS} rows of 0 and, for (b), no idempotency record; then ANALYZE. */
  private static void resetTables(Connection c, String schema, Way way) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("TRUNCATE " + counter(schema, way));
      s.execute("INSERT INTO " + counter(schema, way) + " (key, n) SELECT k, 0 FROM generate_series(0, " + (KEYS - 1)
          + ") k");
      s.execute("ANALYZE " + counter(schema, way));
      if (way == Way.IDEMPOTENT) {
        s.execute("TRUNCATE " + idempotency(schema));
        s.execute("ANALYZE " + idempotency(schema));
      }
    }
  }

  private static long counterSum(Connection c, String schema, Way way) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT coalesce(sum(n), 0) FROM " + counter(schema, way))) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void updateCounter(Connection c, String sql, int key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, key);
      if (ps.executeUpdate() != 1) {
        throw new IllegalStateException("no counter row for key " + key);
      }
    }
  }

  /** The handler of one way, on tables of {@code schema}; payloads are keys 0..{@value #KEYS} - 1. */
  static PglockBurnDown.Handler handler(String schema, Way way) {
    String update = "UPDATE " + counter(schema, way) + " SET n = n + 1 WHERE key = ?";
    String insert = "INSERT INTO " + idempotency(schema) + " (job_id) VALUES (?) ON CONFLICT DO NOTHING";
    return new PglockBurnDown.Handler() {
      @Override
      public JobWorkerBuilder register(JobWorkerBuilder b, BurnDownProgress progress, DataSource pool) {
        String kind = PglockBurnDown.KIND;
        return switch (way) {
          case AT_LEAST_ONCE -> b.handler(kind, Integer.class, (key, job) -> {
            try (Connection c = pool.getConnection()) {
              updateCounter(c, update, key);
            }
            progress.handled();
          });
          case IDEMPOTENT -> b.handler(kind, Integer.class, (key, job) -> {
            try (Connection c = pool.getConnection()) {
              c.setAutoCommit(false);
              try {
                boolean first;
                try (PreparedStatement ps = c.prepareStatement(insert)) {
                  ps.setLong(1, job.id());
                  first = ps.executeUpdate() == 1;
                }
                if (first) {
                  updateCounter(c, update, key);
                }
                c.commit();
              } catch (Exception e) {
                c.rollback();
                throw e;
              } finally {
                c.setAutoCommit(true);
              }
            }
            progress.handled();
          });
          case EXACTLY_ONCE -> b.handlerInTransaction(kind, Integer.class, (key, job, tx) -> {
            updateCounter(tx, update, key);
            progress.handled();
          });
        };
      }

      @Override
      public IntUnaryOperator payload() {
        return i -> i % KEYS;
      }

      @Override
      public String describe() {
        return Report.fmt("%s(\"%s\", Integer.class, payload a key 0..%d: %s) on %s", way == Way.EXACTLY_ONCE
            ? "handlerInTransaction" : "handler", PglockBurnDown.KIND, KEYS - 1, way.what, counter(schema, way));
      }
    };
  }
}
