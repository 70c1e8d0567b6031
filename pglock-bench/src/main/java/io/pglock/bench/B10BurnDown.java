package io.pglock.bench;

import io.pglock.bench.B10Report.Outcome;
import io.pglock.queue.ClaimMode;
import java.sql.Connection;
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
 * <p>The peers are db-scheduler ({@link DbSchedulerBurnDown}) and JobRunr ({@link JobRunrBurnDown});
 * pglock's queue runs twice ({@link PglockBurnDown}), in its default advisory mode and in its lease
 * mode (SKIP LOCKED and a lease, for transaction-mode poolers), on its own table {@code pglock.job},
 * shared with other queues. Goals: advisory mode at least {@value #GOAL_OVER_PEERS}x db-scheduler's
 * and JobRunr's jobs/s, and at least {@value #GOAL_OVER_LEASE}x the lease mode's (the advisory
 * locks must not cost throughput).
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

  @Override
  public String id() {
    return "B10";
  }

  @Override
  public String title() {
    return "queue burn-down: no-op jobs queued beforehand, run by N workers, jobs/s: pglock (advisory, lease) vs"
        + " db-scheduler and JobRunr";
  }

  /**
   * The contenders, run one after the other in this order: pglock's advisory mode right after
   * db-scheduler and before its lease mode, so that the goals' ratios compare burn-downs a few seconds
   * apart (a shared machine's load drifts over JobRunr's minute or two).
   */
  static List<BurnDownContender> contenders(Db db, int workers) {
    return List.of(new DbSchedulerBurnDown(db, workers), new PglockBurnDown(db, workers, ClaimMode.ADVISORY),
        new PglockBurnDown(db, workers, ClaimMode.LEASE), new JobRunrBurnDown(db, workers));
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
    try (Connection monitor = db.connect(db.runPrefix + "-monitor-b10")) {
      for (BurnDownContender c : contenders(db, workers)) {
        outcomes.add(runOne(db, c, jobs, monitor));
      }
    }
    return B10Report.of(this, jobs, workers, outcomes);
  }

  static Outcome runOne(Db db, BurnDownContender c, int jobs, Connection monitor) {
    System.out.printf("  %s, %d jobs: prepare ...", c.name(), jobs);
    System.out.flush();
    Outcome out;
    try {
      out = measure(db, c, jobs, monitor);
    } catch (Exception e) {
      out = new Outcome(c.name(), c.peer(), c.settings(), null, null, null, 0, String.valueOf(e));
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

  static Outcome measure(Db db, BurnDownContender c, int jobs, Connection monitor) throws Exception {
    long t0 = System.nanoTime();
    c.prepare(jobs);
    double prepare = (System.nanoTime() - t0) / 1e9;
    // statistics for the planner, as autovacuum would gather them within a minute of a bulk insert: a
    // queue's fetch query planned on an unanalysed table of 100,000 rows measures the planner, not the queue
    analyze(monitor, c.tables());
    TableStats before = TableStats.of(monitor, c.tables());
    System.out.printf(" %.1f s; burn-down ...", prepare);
    System.out.flush();
    BurnDownContender.BurnDown b = c.burnDown(STALL);
    awaitSessionsEnded(db, monitor);
    TableStats after = TableStats.of(monitor, c.tables());
    System.out.printf(" %.2f s, %.0f jobs/s%n", b.done().toNanos() / 1e9, b.jobsPerSecond());
    return new Outcome(c.name(), c.peer(), c.settings(), b, before, after, prepare, null);
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
