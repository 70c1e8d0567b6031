package io.pglock.bench;

import static org.jobrunr.server.BackgroundJobServerConfiguration.usingStandardBackgroundJobServerConfiguration;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.jobrunr.configuration.JobRunr;
import org.jobrunr.configuration.JobRunrConfiguration.JobRunrConfigurationResult;
import org.jobrunr.server.BackgroundJobServer;
import org.jobrunr.server.JobActivator;
import org.jobrunr.storage.StorageProviderUtils.DatabaseOptions;
import org.jobrunr.storage.sql.postgres.PostgresStorageProvider;
import org.jobrunr.utils.mapper.jackson.JacksonJsonMapper;

/**
 * JobRunr in B10, configured with its fluent API ({@code JobRunr.configure()}) on a plain HikariCP
 * pool: {@code PostgresStorageProvider} with the table prefix {@code b10_jobrunr_<pid>.} (JobRunr creates
 * its tables in that schema, {@code DatabaseOptions.CREATE}), Jackson for its JSON, and a background
 * job server configured but not started ({@code useBackgroundJobServer(configuration, false)}), so
 * that the {@code jobs} no-op jobs ({@link JobRunrNoOp}) are enqueued, through
 * {@code JobRequestScheduler.enqueue(Stream)} (batches of JobRunr's own size), before any worker
 * runs. The clock starts with {@code BackgroundJobServer.start()}.
 *
 * <p>Settings, and why: {@code andWorkerCount(workers)}; the poll interval at {@value #POLL_SECONDS} s,
 * the shortest JobRunr allows on a SQL database ({@code AbstractStorageProvider.validatePollInterval}
 * refuses less: "otherwise it will cause too much load"; the default is 15 s). The interval paces only
 * the first fetch and the fetches that no finished job triggers: a worker that finishes a job asks
 * for new work at once ({@code JobSteward.notifyThreadIdle}, fetching as many jobs as workers are
 * free). But the first fetch comes min(interval / 5, 1 s) after the start, 1 s here, which B10
 * reports as the time to the first job. Everything else at its defaults.
 *
 * <p>"Done": JobRunr keeps a finished job's row in state {@code SUCCEEDED} (for 36 h by default), so
 * the queue is done when the table holds {@code jobs} rows in that state.
 */
final class JobRunrBurnDown implements BurnDownContender {
  /** The version in pom.xml (the shaded jar keeps no manifest to read it from). */
  static final String VERSION = "8.7.0";
  static final String SCHEMA = "b10_jobrunr_" + ProcessHandle.current().pid(); // concurrent runs apart
  static final String TABLE = SCHEMA + ".jobrunr_jobs";
  static final int POLL_SECONDS = 5;

  private final Db db;
  private final int workers;
  private int jobs;
  private BurnDownProgress progress;
  private HikariDataSource pool;
  private BackgroundJobServer server;
  /** JobRunr.configure() was called: JobRunr.destroy() undoes it, whatever got built. */
  private boolean configured;

  JobRunrBurnDown(Db db, int workers) {
    this.db = db;
    this.workers = workers;
  }

  @Override
  public String name() {
    return "JobRunr " + VERSION;
  }

  @Override
  public boolean peer() {
    return true;
  }

  @Override
  public String settings() {
    return Report.fmt("JobRunr.configure() with PostgresStorageProvider(pool, \"%s.\", CREATE), JacksonJsonMapper,"
        + " useBackgroundJobServer(andWorkerCount(%d).andPollInterval(%d s), false), started after the enqueue; jobs"
        + " a JobRequest with a no-op JobRequestHandler (from a JobActivator), enqueued with"
        + " JobRequestScheduler.enqueue(Stream); HikariCP pool of %d; table %s; done = all rows SUCCEEDED", SCHEMA,
        workers, POLL_SECONDS, B10BurnDown.poolSize(workers), TABLE);
  }

  @Override
  public void prepare(int jobs) throws Exception {
    this.jobs = jobs;
    progress = new BurnDownProgress(jobs);
    try (Connection c = db.connect(B10BurnDown.sessionPrefix(db) + "jobrunr-setup");
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
      s.execute("CREATE SCHEMA " + SCHEMA);
    }
    pool = db.hikari(B10BurnDown.SESSION_NAME + "jobrunr", B10BurnDown.poolSize(workers));
    JobRunrNoOp.Handler handler = new JobRunrNoOp.Handler(progress);
    JobActivator activator = new JobActivator() {
      @Override
      public <T> T activateJob(Class<T> type) {
        return type == JobRunrNoOp.Handler.class ? type.cast(handler) : null;
      }
    };
    configured = true;
    JobRunrConfigurationResult jobRunr = JobRunr.configure()
        .useJsonMapper(new JacksonJsonMapper())
        .useStorageProvider(new PostgresStorageProvider(pool, SCHEMA + ".", DatabaseOptions.CREATE))
        .useJobActivator(activator)
        .useBackgroundJobServer(usingStandardBackgroundJobServerConfiguration()
            .andName(db.runPrefix + "-b10")
            .andWorkerCount(workers)
            .andPollInterval(Duration.ofSeconds(POLL_SECONDS)), false)
        .initialize();
    jobRunr.getJobRequestScheduler().enqueue(IntStream.range(0, jobs).mapToObj(JobRunrNoOp.Request::new));
    server = jobRunr.getBackgroundJobServer();
  }

  @Override
  public BurnDown burnDown(Duration stall) throws Exception {
    try (Connection poll = db.connect(B10BurnDown.sessionPrefix(db) + "jobrunr-poll")) {
      progress.start();
      server.start();
      progress.awaitHandled(stall);
      long done = BurnDownProgress.awaitRecorded(poll, "SELECT count(*) = " + jobs + " FROM " + TABLE
          + " WHERE state = 'SUCCEEDED'", stall);
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
    if (configured) {
      JobRunr.destroy(); // stops the background job server and closes the storage provider
      configured = false;
      server = null;
    }
    if (pool != null) {
      pool.close();
      pool = null;
    }
  }

  @Override
  public void close() throws Exception {
    stop();
    try (Connection c = db.connect(B10BurnDown.sessionPrefix(db) + "jobrunr-setup");
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
    }
  }
}
