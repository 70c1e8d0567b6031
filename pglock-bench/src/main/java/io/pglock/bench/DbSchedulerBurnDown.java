package io.pglock.bench;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.SchedulerName;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * db-scheduler in B10: one one-time task whose handler is the no-op ({@link BurnDownProgress#handled}),
 * {@code jobs} instances of it scheduled for now through {@code SchedulerClient.scheduleBatch} (its
 * documented bulk API: JDBC batches of 100 inserts) before the clock starts, then a {@code Scheduler}
 * with {@code threads(workers)} started.
 *
 * <p>Settings, and why: the {@code lock-and-fetch} polling strategy (one
 * {@code UPDATE ... WHERE (..) IN (SELECT .. FOR UPDATE SKIP LOCKED LIMIT n) RETURNING}, the README's
 * choice above 1000 executions/s, PostgreSQL only) at the README's "high throughput (keep threads
 * busy)" limits, {@value #LOWER_LIMIT} and {@value #UPPER_LIMIT} times the threads: it fetches up to
 * 4 x threads executions and fetches again, at once, when the queue falls to 1 x threads, so the
 * polling interval only paces the fetches that find nothing; it is short anyway ({@link #POLLING_INTERVAL},
 * default 10 s) so that a fetch that came back short costs little. Everything else at its defaults.
 *
 * <p>"Done": a one-time task's row is deleted when it completes ({@code OnCompleteRemove}, its
 * default), so the queue is done when its table is empty.
 */
final class DbSchedulerBurnDown implements BurnDownContender {
  /** The version in pom.xml (the shaded jar keeps no manifest to read it from). */
  static final String VERSION = "16.7.1";
  static final String SCHEMA = "b10_dbscheduler_" + ProcessHandle.current().pid(); // concurrent runs apart
  static final String TABLE = SCHEMA + ".scheduled_tasks";
  static final String TASK = "b10-noop";
  static final double LOWER_LIMIT = 1.0;
  static final double UPPER_LIMIT = 4.0;
  static final Duration POLLING_INTERVAL = Duration.ofMillis(100);

  private final Db db;
  private final int workers;
  private BurnDownProgress progress;
  private HikariDataSource pool;
  private Scheduler scheduler;

  DbSchedulerBurnDown(Db db, int workers) {
    this.db = db;
    this.workers = workers;
  }

  /**
   * The table and indexes as db-scheduler's repository gives them for PostgreSQL
   * ({@code db-scheduler/src/test/resources/postgresql_tables.sql} at v16.7.1; the jar ships no DDL),
   * in a schema of the benchmark's own.
   */
  static List<String> ddl() {
    return List.of("""
        CREATE TABLE %s (
          task_name text not null,
          task_instance text not null,
          task_data bytea,
          execution_time timestamp with time zone not null,
          picked BOOLEAN not null,
          picked_by text,
          last_success timestamp with time zone,
          last_failure timestamp with time zone,
          consecutive_failures INT,
          last_heartbeat timestamp with time zone,
          version BIGINT not null,
          priority SMALLINT,
          PRIMARY KEY (task_name, task_instance))""".formatted(TABLE),
        "CREATE INDEX execution_time_idx ON " + TABLE + " (execution_time)",
        "CREATE INDEX last_heartbeat_idx ON " + TABLE + " (last_heartbeat)",
        "CREATE INDEX priority_execution_time_idx ON " + TABLE + " (priority desc, execution_time asc)");
  }

  @Override
  public String name() {
    return "db-scheduler " + VERSION;
  }

  @Override
  public boolean peer() {
    return true;
  }

  @Override
  public String settings() {
    return Report.fmt("Scheduler.create(pool, oneTime task).threads(%d).pollUsingLockAndFetch(%.1f, %.1f)"
        + ".pollingInterval(%d ms), the rest at defaults; jobs scheduled with SchedulerClient.scheduleBatch (batches of"
        + " %d) for now; HikariCP pool of %d; table %s (the repository's PostgreSQL DDL, 3 indexes); done = table"
        + " empty (a completed one-time task's row is deleted)", workers, LOWER_LIMIT, UPPER_LIMIT,
        POLLING_INTERVAL.toMillis(), SchedulerClient.DEFAULT_BATCH_SIZE, B10BurnDown.poolSize(workers), TABLE);
  }

  @Override
  public void prepare(int jobs) throws Exception {
    progress = new BurnDownProgress(jobs);
    try (Connection c = db.connect(B10BurnDown.sessionPrefix(db) + "dbscheduler-setup");
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
      s.execute("CREATE SCHEMA " + SCHEMA);
      for (String ddl : ddl()) {
        s.execute(ddl);
      }
    }
    pool = db.hikari(B10BurnDown.SESSION_NAME + "dbscheduler", B10BurnDown.poolSize(workers));
    BurnDownProgress p = progress;
    OneTimeTask<Void> task = Tasks.oneTime(TASK).execute((instance, context) -> p.handled());
    Stream<TaskInstance<?>> instances = IntStream.range(0, jobs).mapToObj(i -> task.instance(Integer.toString(i)));
    SchedulerClient.Builder.create(pool, task).tableName(TABLE).build().scheduleBatch(instances, Instant.now());
    scheduler = Scheduler.create(pool, task)
        .tableName(TABLE)
        .threads(workers)
        .pollUsingLockAndFetch(LOWER_LIMIT, UPPER_LIMIT)
        .pollingInterval(POLLING_INTERVAL)
        .schedulerName(new SchedulerName.Fixed(db.runPrefix + "-b10"))
        .build();
  }

  @Override
  public BurnDown burnDown(Duration stall) throws Exception {
    try (Connection poll = db.connect(B10BurnDown.sessionPrefix(db) + "dbscheduler-poll")) {
      progress.start();
      scheduler.start();
      progress.awaitHandled(stall);
      long done = BurnDownProgress.awaitRecorded(poll, "SELECT NOT EXISTS (SELECT 1 FROM " + TABLE + ")", stall);
      return progress.result(done);
    } finally {
      stop();
    }
  }

  @Override
  public List<String> tables() {
    return List.of(TABLE);
  }

  private void stop() {
    if (scheduler != null) {
      scheduler.stop();
      scheduler = null;
    }
    if (pool != null) {
      pool.close();
      pool = null;
    }
  }

  @Override
  public void close() throws Exception {
    stop();
    try (Connection c = db.connect(B10BurnDown.sessionPrefix(db) + "dbscheduler-setup");
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
    }
  }
}
