package io.pglock.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.bench.B10Report.Outcome;
import io.pglock.bench.B10Report.WakeUp;
import io.pglock.queue.ClaimMode;
import io.pglock.queue.JobQueue;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * B10: queue burn-down. Each contender ({@link BurnDownContender}) gets the same {@code jobs} no-op
 * jobs queued before its clock starts, then runs them with {@code workers} workers as fast as it
 * goes; the figure is jobs/s, from the call that starts the workers until the last job is recorded
 * done in the system's own tables. After each burn-down, the dead tuples and size of the tables that
 * held the queue ({@link TableStats}). The contenders run one after the other, never at once: the
 * peers each in a schema of its own that it drops at the end, pglock on a queue of its own in its
 * shared table {@code pglock.job}, whose rows it deletes at the end.
 *
 * <p>The peers are db-scheduler ({@link DbSchedulerBurnDown}), JobRunr ({@link JobRunrBurnDown}) and
 * graphile-worker ({@link GraphileWorkerBurnDown}: Node.js, in a database of its own, twice: at the
 * settings its performance page gives for throughput, and at its defaults); pglock's queue runs twice
 * ({@link PglockBurnDown}), in its default advisory mode and in its lease mode (SKIP LOCKED and a
 * lease, for transaction-mode poolers), on its own table {@code pglock.job}, shared with other queues.
 * Goals: advisory mode at least {@value #GOAL_OVER_PEERS}x db-scheduler's and JobRunr's jobs/s, at
 * least {@value #GOAL_OVER_LEASE}x the lease mode's (the advisory locks must not cost throughput), at
 * least {@value #GOAL_OVER_GRAPHILE}x graphile-worker's at its throughput settings, and the lease mode
 * at least {@value #GOAL_LEASE_OVER_GRAPHILE}x that; graphile-worker's defaults are informational.
 *
 * <p>After the burn-downs, the wake-up on an idle queue of graphile-worker and of pglock, one after the
 * other, each measured in its own process (from just before the enqueue call to the handler's start):
 * goal pglock's p50 at most graphile-worker's.
 */
final class B10BurnDown implements Benchmark {
  static final int FULL_JOBS = 100_000;
  /** With fewer than {@value #SHORT_BELOW_TRIALS} {@code --trials} (the CI's short run), unless --b10-jobs says. */
  static final int SHORT_JOBS = 5_000;
  static final int SHORT_BELOW_TRIALS = 10;
  static final int DEFAULT_WORKERS = 8;
  /** A burn-down fails when no job at all is handled for this long (JobRunr's first fetch alone takes 1 s). */
  static final Duration STALL = Duration.ofSeconds(30);
  /** How long the contender's sessions may take to end after its burn-down returned. */
  static final Duration SESSIONS_END = Duration.ofSeconds(10);
  /** Every contender session's application_name starts with {@code <runPrefix>-} and this. */
  static final String SESSION_NAME = "b10-";
  /** pglock's advisory mode over each peer, jobs/s. */
  static final double GOAL_OVER_PEERS = 2.0;
  /** pglock's advisory mode over its lease mode, jobs/s. */
  static final double GOAL_OVER_LEASE = 0.9;
  /** pglock's advisory mode over graphile-worker at its throughput settings, jobs/s. */
  static final double GOAL_OVER_GRAPHILE = 1.2;
  /** pglock's lease mode over graphile-worker at its throughput settings, jobs/s. */
  static final double GOAL_LEASE_OVER_GRAPHILE = 1.0;
  /** pglock's wake-up p50 over graphile-worker's, at most. */
  static final double GOAL_WAKE_OVER_GRAPHILE = 1.0;
  /** Wake-up samples per system with {@value #FULL_JOBS} jobs or more; fewer jobs (short runs): {@value #SHORT_WAKE_SAMPLES}. */
  static final int WAKE_SAMPLES = 200;
  static final int SHORT_WAKE_SAMPLES = 50;
  /** Rounds of the contenders of the graphile-worker goals in the full run (medians judged). */
  static final int ROUNDS = 5;
  /**
   * pglock's sessions in the rounds ({@code JobWorkerBuilder.sessions}): its throughput setting, as
   * graphile-worker's row runs at its throughput settings.
   */
  static final int SESSIONS = Integer.getInteger("pglock.b10.sessions", 2); // the property: for comparisons

  @Override
  public String id() {
    return "B10";
  }

  @Override
  public String title() {
    return "queue burn-down: no-op jobs queued beforehand, run by N workers, jobs/s: pglock (advisory, lease) vs"
        + " db-scheduler, JobRunr and graphile-worker; wake-up on an idle queue vs graphile-worker";
  }

  /**
   * The contenders, run one after the other in this order: pglock's advisory mode right after
   * db-scheduler, then graphile-worker at its throughput settings, then pglock's lease mode, so that
   * each goal's ratio compares burn-downs next to each other, seconds apart (a shared machine's load
   * drifts over JobRunr's minute or two); graphile-worker's defaults (informational) and JobRunr last.
   */
  /**
   * The contenders measured in every round (the systems of the graphile-worker goals), in the order of
   * round 0; each round starts one further along. pglock runs at its throughput settings, as
   * graphile-worker does: {@code retention(Duration.ZERO)} (graphile-worker keeps no completed job)
   * and {@link #SESSIONS} sessions. Each gets an unmeasured warm-up burn-down of {@code warmUp} jobs in
   * its own process first (a tenth of the jobs left the JIT compiling through the measured run).
   */
  static List<BurnDownContender> repeated(Db db, int workers, int warmUp, int round) {
    List<BurnDownContender> all = new ArrayList<>(List.of(
        new PglockBurnDown(db, workers, ClaimMode.ADVISORY).retention(Duration.ZERO).sessions(SESSIONS).warmUp(warmUp),
        new GraphileWorkerBurnDown(db, workers, GraphileWorkerBurnDown.Mode.THROUGHPUT).warmUp(warmUp),
        new PglockBurnDown(db, workers, ClaimMode.LEASE).retention(Duration.ZERO).sessions(SESSIONS).warmUp(warmUp)));
    java.util.Collections.rotate(all, -round);
    return all;
  }

  /**
   * The contenders measured once, after the rounds, cold (no warm-up): the JVM peers and
   * graphile-worker's defaults (goals with a wide margin, or none), and pglock's advisory mode at its
   * default retention (succeeded jobs kept a day: what keeping them costs).
   */
  static List<BurnDownContender> once(Db db, int workers) {
    return List.of(new DbSchedulerBurnDown(db, workers),
        new PglockBurnDown(db, workers, ClaimMode.ADVISORY, "advisory-kept",
            "b10-" + ProcessHandle.current().pid() + "-advisory-kept", PglockBurnDown.ADVISORY_KEPT,
            QueueInstrumentation.NONE),
        new GraphileWorkerBurnDown(db, workers, GraphileWorkerBurnDown.Mode.DEFAULTS), new JobRunrBurnDown(db, workers));
  }

  /** Rounds of the {@link #repeated} contenders: at most {@value #ROUNDS}, one in the short run. */
  static int rounds(BenchOptions o) {
    return o.trials() < SHORT_BELOW_TRIALS ? 1 : Math.max(1, Math.min(ROUNDS, o.rounds()));
  }

  /** The application_name prefix of every contender session (for LIKE, with a % after it). */
  static String sessionPrefix(Db db) {
    return db.runPrefix + "-" + SESSION_NAME;
  }

  /** Each contender's connection pool: a connection per worker and a few for its own bookkeeping. */
  static int poolSize(int workers) {
    return workers + 4;
  }

  static int jobs(BenchOptions o) {
    return o.b10Jobs() > 0 ? o.b10Jobs() : o.trials() < SHORT_BELOW_TRIALS ? SHORT_JOBS : FULL_JOBS;
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    int jobs = jobs(o);
    int workers = o.b10Workers();
    List<Outcome> outcomes = new ArrayList<>();
    List<WakeUp> wakeUps = new ArrayList<>();
    try (Connection monitor = db.connect(db.runPrefix + "-monitor-b10")) {
      // -Dpglock.b10.only=advisory,throughput: only the contenders whose name contains one of these
      // (profiling one system, or two side by side)
      List<String> only = List.of(System.getProperty("pglock.b10.only", "").split(","));
      int rounds = rounds(o);
      for (int round = 0; round < rounds; round++) {
        if (rounds > 1) {
          System.out.printf("  round %d of %d%n", round + 1, rounds);
        }
        for (BurnDownContender c : repeated(db, workers, jobs, round)) {
          if (only.stream().noneMatch(c.name()::contains)) {
            continue; // never prepared: nothing to close
          }
          outcomes.add(runOne(db, c, jobs, monitor, true));
        }
      }
      for (BurnDownContender c : once(db, workers)) {
        if (only.stream().noneMatch(c.name()::contains)) {
          continue; // never prepared: nothing to close (a peer's close drops its fixed-name schema)
        }
        outcomes.add(runOne(db, c, jobs, monitor, true));
      }
      int samples = jobs >= FULL_JOBS ? WAKE_SAMPLES : SHORT_WAKE_SAMPLES;
      if (Boolean.parseBoolean(System.getProperty("pglock.b10.wake", "true"))) { // false: burn-downs only (profiling)
        wakeUps.add(graphileWakeUp(db, monitor, workers, samples));
        wakeUps.add(pglockWakeUp(db, monitor, workers, samples));
      }
    }
    return B10Report.of(this, jobs, workers, B10Report.medians(outcomes), wakeUps, B10Report.roundNotes(outcomes));
  }

  /** graphile-worker's wake-up on an idle queue ({@link GraphileWorkerBurnDown#wakeUp}), or why not. */
  static WakeUp graphileWakeUp(Db db, Connection monitor, int workers, int samples) {
    String name = GraphileWorker.name() + ", defaults";
    String why = GraphileWorker.missing();
    if (why != null) {
      System.out.printf("  wake-up, %s: not run: %s%n", name, why);
      return new WakeUp(name, null, null, "not run: " + why, null);
    }
    System.out.printf("  wake-up, %s, %d samples ...", name, samples);
    System.out.flush();
    long t = System.nanoTime();
    try {
      double[][] w = GraphileWorkerBurnDown.wakeUp(db, monitor, workers, samples, B11QueueLatencies.WARM_UP_SAMPLES,
          B11QueueLatencies.GAP_MIN_MILLIS, B11QueueLatencies.GAP_MAX_MILLIS, B11QueueLatencies.WAKE_TIMEOUT);
      System.out.printf(" %.0f s%n", (System.nanoTime() - t) / 1e9);
      return new WakeUp(name, w[0], w[1], null, null);
    } catch (Exception e) {
      System.out.printf(" ERROR %s%n", e);
      return new WakeUp(name, null, null, null, String.valueOf(e));
    }
  }

  /**
   * pglock's wake-up on an idle queue, as B11 takes it ({@link B11QueueLatencies.WakeSamples}) but with
   * B10's settings: a worker with {@code concurrency(workers)} (the rest at its defaults: advisory
   * mode, LISTEN on) on a queue of its own in {@code pglock.job}, on a HikariCP pool of B10's size;
   * the queue's rows deleted afterwards.
   */
  static WakeUp pglockWakeUp(Db db, Connection monitor, int workers, int samples) {
    String name = "pglock advisory, defaults";
    String queue = "b10-" + ProcessHandle.current().pid() + "-wake";
    System.out.printf("  wake-up, %s, %d samples ...", name, samples);
    System.out.flush();
    long t = System.nanoTime();
    try (HikariDataSource pool = db.hikari(SESSION_NAME + "pglock-wake", poolSize(workers))) {
      PgLockSchema.migrate(pool, PglockBurnDown.SCHEMA);
      try (PgLocks locks = PgLocks.builder(pool).nodeName(db.nodeName(SESSION_NAME + "pglock-wake")).namespace("b10")
          .build();
          JobQueue jobs = JobQueue.builder(locks).build()) {
        B11QueueLatencies.WakeSamples w = B11QueueLatencies.WakeSamples.of(jobs, queue, samples,
            b -> b.concurrency(workers));
        System.out.printf(" %.0f s%n", (System.nanoTime() - t) / 1e9);
        return new WakeUp(name, w.wake(), w.call(), null, null);
      } finally {
        try (PreparedStatement ps = monitor.prepareStatement("DELETE FROM " + PglockBurnDown.TABLE
            + " WHERE queue = ?")) {
          ps.setString(1, queue);
          ps.executeUpdate();
        }
      }
    } catch (Exception e) {
      System.out.printf(" ERROR %s%n", e);
      return new WakeUp(name, null, null, null, String.valueOf(e));
    }
  }

  static Outcome runOne(Db db, BurnDownContender c, int jobs, Connection monitor) {
    return runOne(db, c, jobs, monitor, false);
  }

  /** As above; with {@code checkpoint}, a CHECKPOINT just before the burn-down ({@link #checkpoint}). */
  static Outcome runOne(Db db, BurnDownContender c, int jobs, Connection monitor, boolean checkpoint) {
    String notRun = c.notRun();
    if (notRun != null) {
      System.out.printf("  %s, %d jobs: %s%n", c.name(), jobs, notRun);
      return new Outcome(c.name(), c.peer(), c.settings(), null, null, null, 0, null, notRun);
    }
    System.out.printf("  %s, %d jobs: prepare ...", c.name(), jobs);
    System.out.flush();
    Outcome out;
    try {
      out = measure(db, c, jobs, monitor, checkpoint);
    } catch (Exception e) {
      out = new Outcome(c.name(), c.peer(), c.settings(), null, null, null, 0, String.valueOf(e), null);
      System.out.printf(" ERROR %s%n", e);
      e.printStackTrace(System.out);
    }
    try {
      c.close();
    } catch (Exception e) {
      out = out.withError("close: " + e);
    }
    return out;
  }

  static Outcome measure(Db db, BurnDownContender c, int jobs, Connection b10, boolean checkpoint) throws Exception {
    long t0 = System.nanoTime();
    c.prepare(jobs);
    // a peer in a database of its own (graphile-worker): its tables and sessions are looked at there
    Connection monitor = c.monitor() != null ? c.monitor() : b10;
    double prepare = (System.nanoTime() - t0) / 1e9;
    // statistics for the planner, as autovacuum would gather them within a minute of a bulk insert: a
    // queue's fetch query planned on an unanalysed table of 100,000 rows measures the planner, not the queue
    analyze(monitor, c.tables());
    if (checkpoint) {
      checkpoint(b10);
    }
    TableStats before = TableStats.of(monitor, c.tables());
    System.out.printf(" %.1f s; burn-down ...", prepare);
    System.out.flush();
    BurnDownContender.BurnDown b = c.burnDown(STALL);
    awaitSessionsEnded(db, monitor);
    TableStats after = TableStats.of(monitor, c.tables());
    System.out.printf(" %.2f s, %.0f jobs/s%n", b.done().toNanos() / 1e9, b.jobsPerSecond());
    return new Outcome(c.name(), c.peer(), c.settings(), b, before, after, prepare, null, null);
  }

  /**
   * A checkpoint just before each burn-down: a burn-down writes tens of megabytes of WAL, so the
   * server's own checkpoints (max_wal_size) would fall inside some burn-downs and not others, and the
   * first change of every page after a checkpoint writes the whole page to the WAL. So every
   * contender starts right after one. Needs superuser or the role pg_checkpoint; without, skipped.
   */
  private static void checkpoint(Connection c) {
    try (Statement s = c.createStatement()) {
      s.execute("CHECKPOINT");
    } catch (SQLException e) {
      // not allowed: the burn-downs run without (noisier)
    }
  }

  private static void analyze(Connection monitor, List<String> tables) throws SQLException {
    try (Statement s = monitor.createStatement()) {
      for (String table : tables) {
        s.execute("ANALYZE " + table);
      }
    }
  }

  /**
   * Waits until no session of the contender's is left: a backend adds its table counts to
   * {@code pg_stat_user_tables} when it exits (and otherwise only every second or so, when idle).
   * pglock's sessions show as {@code pglock:<node>:...} while pglock uses them, so both names count.
   */
  private static void awaitSessionsEnded(Db db, Connection monitor) throws SQLException, InterruptedException {
    long deadline = System.nanoTime() + SESSIONS_END.toNanos();
    int left;
    while ((left = Db.countSessions(monitor, sessionPrefix(db) + "%")
        + Db.countSessions(monitor, "pglock:" + sessionPrefix(db) + "%")) > 0) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(left + " session(s) named " + sessionPrefix(db) + "* still open "
            + SESSIONS_END.toSeconds() + " s after the burn-down");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
    }
  }
}
