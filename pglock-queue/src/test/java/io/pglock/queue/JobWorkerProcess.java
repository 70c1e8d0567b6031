package io.pglock.queue;

import io.pglock.PgLocks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A worker JVM for {@link JobFleetProcessTest}: works the queue until killed. Each attempt logs its
 * start (committed at once) and, at its end, writes the job's effect with an idempotency record and
 * its end time in one transaction, so that the test can tell what ran where and when.
 *
 * <p>Kind {@code count} is a handler in a transaction ({@link TransactionalJobHandler}): it adds 1 to
 * the job's row of {@code fleet_counter} in the transaction that records its success.
 *
 * <p>Arguments: JDBC URL, node name, queue, concurrency, and optionally the worker's sessions (1).
 */
public final class JobWorkerProcess {
  private JobWorkerProcess() {}

  record Work(int n) {}

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String node = args[1];
    String queue = args[2];
    int concurrency = Integer.parseInt(args[3]);
    int sessions = args.length > 4 ? Integer.parseInt(args[4]) : 1;
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url);
    ds.setUser("postgres");
    ds.setConnectTimeout(5);
    ds.setSocketTimeout(30);
    ds.setApplicationName("fleet-" + node); // the test terminates a worker's backends by it
    PgLocks locks = PgLocks.builder(ds).namespace("fleet").nodeName(node).lease(Duration.ofSeconds(5)).build();
    JobQueue jobs = JobQueue.builder(locks).build();
    ThreadLocal<Connection> own = new ThreadLocal<>();
    jobs.worker(queue).concurrency(concurrency).sessions(sessions).pollInterval(Duration.ofMillis(500))
        .backoff(attempt -> Duration.ofMillis(50))
        .handler("work", Work.class, (work, job) -> {
          Connection c = own.get();
          if (c == null || !c.isValid(2)) {
            c = ds.getConnection();
            own.set(c);
          }
          try {
            run(c, node, job, work.n() % 10 == 0);
          } catch (SQLException e) {
            own.remove(); // reconnect next time (the server may have restarted)
            try {
              c.close();
            } catch (SQLException ignored) {
              // gone already
            }
            throw e;
          }
        })
        // exactly once: the counter's increment commits with the job's success, or not at all
        .handlerInTransaction("count", Work.class, (work, job, tx) -> {
          try (PreparedStatement ps = tx.prepareStatement("UPDATE fleet_counter SET n = n + 1 WHERE job = ?")) {
            ps.setInt(1, work.n());
            ps.executeUpdate();
          }
          // the work after the write, so that kills and terminations land inside the transaction
          Thread.sleep(work.n() % 10 == 1 ? 100 + ThreadLocalRandom.current().nextInt(100)
              : 2 + ThreadLocalRandom.current().nextInt(10));
        }).start();
    System.out.println("READY " + node);
    System.out.flush();
    Thread.currentThread().join(); // until killed
  }

  private static void run(Connection c, String node, JobContext job, boolean slow) throws Exception {
    c.setAutoCommit(true);
    long runId;
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO fleet_run (job_id, attempt, node, started_at)"
        + " VALUES (?, ?, ?, clock_timestamp()) RETURNING id")) {
      ps.setLong(1, job.id());
      ps.setInt(2, job.attempt());
      ps.setString(3, node);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        runId = rs.getLong(1);
      }
    }
    // simulated work; a tenth of the jobs take long, so that a second attempt started too early
    // would overlap the first (the check below would see it)
    Thread.sleep(slow ? 100 + ThreadLocalRandom.current().nextInt(100) : 2 + ThreadLocalRandom.current().nextInt(10));
    c.setAutoCommit(false);
    try (PreparedStatement effect = c.prepareStatement(
            "INSERT INTO fleet_effect (job_id, node) VALUES (?, ?) ON CONFLICT (job_id) DO NOTHING");
        PreparedStatement end = c.prepareStatement("UPDATE fleet_run SET ended_at = clock_timestamp(),"
            + " effect_written = ? WHERE id = ?")) {
      effect.setLong(1, job.id());
      effect.setString(2, node);
      int written = effect.executeUpdate();
      end.setBoolean(1, written == 1);
      end.setLong(2, runId);
      end.executeUpdate();
      c.commit();
    } catch (SQLException e) {
      try {
        c.rollback();
      } catch (SQLException ignored) {
        // the connection is gone
      }
      throw e;
    } finally {
      try {
        c.setAutoCommit(true);
      } catch (SQLException ignored) {
        // the connection is gone
      }
    }
  }
}
