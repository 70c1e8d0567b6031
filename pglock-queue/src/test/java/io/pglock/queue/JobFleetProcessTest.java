package io.pglock.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.testing.Await;
import io.pglock.testing.PrivateServer;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Worker JVMs ({@link JobWorkerProcess}) work a queue of jobs on a server of the test's own while
 * the test kills some of them with SIGKILL at random, terminates every backend of others, and
 * restarts the server once. Half the jobs (kind {@code work}) write an effect with an idempotency
 * record; the other half (kind {@code count}) add 1 to a counter in their handler's transaction
 * ({@link TransactionalJobHandler}), with no idempotency record at all. At the end every job has
 * succeeded, every {@code work} job has exactly one effect, every counter is at exactly 1 (exactly
 * once, through kills, terminations and the crash), no job is lost, and no two
 * attempts of a job ran at the same time while both their workers were connected: an attempt that
 * ended is followed only by attempts that started after its end, and an attempt that never ended
 * (its JVM killed, its backends terminated, or its connection lost in the restart) only by attempts
 * that started after that kill, termination or restart; an attempt that started within a lease after
 * its worker's backends were terminated counts as interrupted by that termination: its worker
 * believed it owned the job until it noticed, at the latest at the lease deadline, which is all
 * {@code isOwned()} promises (docs/queue.md).
 *
 * <p>{@code -Dpglock.fleet.jobs} (default 2,000) sets the number of jobs; the figure is
 * 10,000 ({@code pglock-queue/faults.sh}).
 */
@org.junit.jupiter.api.Tag("faults") // real servers and processes failing; run on one JDK in CI (.ci/run)
class JobFleetProcessTest {
  private static final int WORKERS = 4;
  private static final int CONCURRENCY = 4;
  /** {@link JobWorkerProcess}'s lease. */
  private static final Duration WORKER_LEASE = Duration.ofSeconds(5);

  @Test
  void sigkillAndAServerRestart_everyJobSucceedsOnce_noneConcurrent_noneLost() throws Exception {
    int jobCount = Integer.getInteger("pglock.fleet.jobs", 2_000);
    PrivateServer server;
    try {
      server = PrivateServer.start("max_connections=100");
    } catch (PrivateServer.Unavailable e) {
      assumeTrue(false, "no private PostgreSQL server here: " + e.getMessage());
      return;
    }
    List<Process> all = new CopyOnWriteArrayList<>();
    try (server) {
      DataSource ds = server.dataSource("pglock-fleet-test");
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
      try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE fleet_effect (job_id bigint PRIMARY KEY, node text, at timestamptz DEFAULT clock_timestamp())");
        s.execute("CREATE TABLE fleet_run (id bigserial PRIMARY KEY, job_id bigint, attempt int, node text,"
            + " started_at timestamptz, ended_at timestamptz, effect_written boolean)");
        // from "at" (just before the SIGKILL or the stop) to "until" (after the process exited or the
        // server is back); node null: everybody (the restart)
        s.execute("CREATE TABLE fleet_outage (id serial, node text, at timestamptz, until timestamptz)");
        // odd jobs are of kind count: each adds 1 to its row in its handler's transaction
        s.execute("CREATE TABLE fleet_counter (job int PRIMARY KEY, n int NOT NULL DEFAULT 0)");
        s.execute("INSERT INTO fleet_counter (job) SELECT i FROM generate_series(1, " + (jobCount - 1) + ", 2) i");
      }
      try (PgLocks locks = PgLocks.builder(ds).namespace("fleet").nodeName("enqueuer").build();
          JobQueue jobs = JobQueue.builder(locks).build()) {
        List<JobRequest> batch = new ArrayList<>();
        for (int i = 0; i < jobCount; i++) {
          batch.add(JobRequest.of(i % 2 == 0 ? "work" : "count", new JobWorkerProcess.Work(i)).queue("fleet"));
          if (batch.size() == 1000 || i == jobCount - 1) {
            jobs.enqueueAll(batch);
            batch.clear();
          }
        }
      }
      Random random = new Random();
      Map<Process, String> live = new HashMap<>();
      int started = 0;
      for (; started < WORKERS; started++) {
        Process p = startWorker(server.jdbcUrl(), "w" + started);
        live.put(p, "w" + started);
        all.add(p);
      }
      int kills = 0;
      int terminations = 0;
      boolean restarted = false;
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
      while (succeeded(ds) < jobCount) {
        assertThat(System.nanoTime() - deadline).as("all jobs done within 10 minutes").isNegative();
        Thread.sleep(300 + random.nextInt(500)); // the pace of the faults, not a synchronisation
        long done = succeeded(ds);
        if (!restarted && done > jobCount * 2 / 5) {
          int outage = recordOutage(ds, null);
          server.stopImmediate();
          server.startServer();
          outageOver(ds, outage);
          restarted = true;
          System.out.println("fleet: server restarted at " + done + " succeeded");
          continue;
        }
        if (done < jobCount * 9 / 10 && random.nextInt(3) == 0) {
          // every backend of a worker terminated: its lock sessions and its handlers' transactions
          String node = new ArrayList<>(live.values()).get(random.nextInt(live.size()));
          int outage = recordOutage(ds, node);
          terminations += terminate(ds, node);
          outageOver(ds, outage);
          continue;
        }
        if (done < jobCount * 9 / 10) {
          Process victim = new ArrayList<>(live.keySet()).get(random.nextInt(live.size()));
          String node = live.remove(victim);
          int outage = recordOutage(ds, node);
          victim.destroyForcibly(); // SIGKILL
          victim.waitFor(30, TimeUnit.SECONDS);
          outageOver(ds, outage);
          kills++;
          String name = "w" + started++;
          Process p = startWorker(server.jdbcUrl(), name);
          live.put(p, name);
          all.add(p);
        }
      }
      assertThat(restarted).as("the server was restarted once").isTrue();
      Await.until("every job succeeded", Duration.ofMinutes(2), () -> succeeded(ds) == jobCount);
      check(ds, jobCount, kills, terminations);
    } finally {
      for (Process p : all) {
        p.destroyForcibly();
      }
    }
  }

  /**
   * Every other worker runs on two sessions ({@code JobWorkerBuilder.sessions(2)}, two handler threads
   * each), so the guarantees are checked for those too: by the number in its name, odd ones.
   */
  private static int sessions(String node) {
    String digits = node.replaceAll("\\D", "");
    return !digits.isEmpty() && Integer.parseInt(digits.substring(Math.max(0, digits.length() - 6))) % 2 == 1 ? 2 : 1;
  }

  private static Process startWorker(String url, String node) throws Exception {
    String cp = System.getProperty("surefire.test.class.path");
    if (cp == null || cp.isBlank()) {
      cp = System.getProperty("java.class.path");
    }
    ProcessBuilder pb = new ProcessBuilder(System.getProperty("java.home") + File.separator + "bin" + File.separator
        + "java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", cp,
        JobWorkerProcess.class.getName(), url, node, "fleet", Integer.toString(CONCURRENCY),
        Integer.toString(sessions(node)));
    pb.redirectErrorStream(true);
    Process p = pb.start();
    Thread pump = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          if (line.contains("ERROR") || line.startsWith("Exception")) {
            System.out.println(node + ": " + line);
          }
        }
      } catch (java.io.IOException e) {
        // the process ended
      }
    }, "pump-" + node);
    pump.setDaemon(true);
    pump.start();
    return p;
  }

  /** Terminates every backend of a worker JVM (its lock sessions and its own connections). @return how many */
  private static int terminate(DataSource ds, String node) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            + " WHERE application_name = ? OR application_name LIKE ?")) {
      ps.setString(1, "fleet-" + node);
      ps.setString(2, "pglock:" + node + ":%");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static int recordOutage(DataSource ds, String node) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("INSERT INTO fleet_outage (node, at) VALUES (?, clock_timestamp())"
            + " RETURNING id")) {
      ps.setString(1, node);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static void outageOver(DataSource ds, int id) throws Exception {
    Await.until("the server answers", Duration.ofSeconds(60), () -> succeeded(ds) >= 0);
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("UPDATE fleet_outage SET until = clock_timestamp() WHERE id = ?")) {
      ps.setInt(1, id);
      ps.execute();
    }
  }

  /** Succeeded jobs of the fleet's queue; while the server restarts, waits (bounded) until it answers. */
  private static long succeeded(DataSource ds) {
    long[] count = {-1};
    Await.until("the server answers", Duration.ofSeconds(60), () -> {
      try (Connection c = ds.getConnection(); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT count(*) FROM pglock.job WHERE queue = 'fleet' AND state = 'succeeded'")) {
        rs.next();
        count[0] = rs.getLong(1);
        return true;
      } catch (java.sql.SQLException e) {
        return false; // restarting: read again
      }
    });
    return count[0];
  }

  private record Run(long job, int attempt, String node, Instant start, Instant end) {}

  private static void check(DataSource ds, int jobCount, int kills, int terminations) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT count(*), count(DISTINCT job_id) FROM fleet_effect")) {
        rs.next();
        assertThat(rs.getLong(1)).as("one effect per job of kind work").isEqualTo((jobCount + 1) / 2);
      }
      try (ResultSet rs = s.executeQuery("SELECT count(*), count(*) FILTER (WHERE n = 1),"
          + " coalesce(string_agg(job || ':' || n, ', ') FILTER (WHERE n <> 1), '') FROM fleet_counter")) {
        rs.next();
        assertThat(rs.getString(3)).as("counters not at exactly 1 (job:n)").isEmpty();
        assertThat(rs.getLong(2)).as("every counter of a job of kind count at exactly 1").isEqualTo(jobCount / 2);
      }
      long countRetried;
      try (ResultSet rs = s.executeQuery("SELECT count(*) FROM pglock.job WHERE queue = 'fleet' AND kind = 'count'"
          + " AND attempt > 1")) {
        rs.next();
        countRetried = rs.getLong(1); // attempts cut short by a fault: their transaction rolled back
      }
      try (ResultSet rs = s.executeQuery("SELECT state, count(*) FROM pglock.job WHERE queue = 'fleet' GROUP BY state")) {
        Map<String, Long> states = new HashMap<>();
        while (rs.next()) {
          states.put(rs.getString(1), rs.getLong(2));
        }
        assertThat(states).as("every job succeeded, none lost").isEqualTo(Map.of("succeeded", (long) jobCount));
      }
      List<Outage> outages = new ArrayList<>();
      try (ResultSet rs = s.executeQuery("SELECT node, at, until FROM fleet_outage")) {
        while (rs.next()) {
          outages.add(new Outage(rs.getString(1), rs.getTimestamp(2).toInstant(), rs.getTimestamp(3).toInstant()));
        }
      }
      Map<Long, List<Run>> runs = new HashMap<>();
      try (ResultSet rs = s.executeQuery("SELECT job_id, attempt, node, started_at, ended_at FROM fleet_run"
          + " ORDER BY job_id, started_at")) {
        while (rs.next()) {
          Timestamp end = rs.getTimestamp(5);
          runs.computeIfAbsent(rs.getLong(1), k -> new ArrayList<>()).add(new Run(rs.getLong(1), rs.getInt(2),
              rs.getString(3), rs.getTimestamp(4).toInstant(), end == null ? null : end.toInstant()));
        }
      }
      int overlaps = 0;
      int rerunAfterEffect = 0;
      int interrupted = 0;
      List<String> examples = new ArrayList<>();
      for (List<Run> list : runs.values()) {
        for (int i = 1; i < list.size(); i++) {
          Run before = list.get(i - 1);
          Run after = list.get(i);
          Instant freeFrom;
          if (before.end() != null) {
            freeFrom = before.end();
            rerunAfterEffect++;
          } else {
            interrupted++;
            freeFrom = outageAfter(before, outages);
          }
          if (freeFrom == null || after.start().isBefore(freeFrom)) {
            overlaps++;
            if (examples.size() < 5) {
              examples.add(before + " then " + after + " (free from " + freeFrom + ")");
            }
          }
        }
      }
      System.out.println("fleet: " + jobCount + " jobs (" + jobCount / 2 + " counters in the handler's transaction, all at"
          + " exactly 1, " + countRetried + " of them after more than one attempt), " + kills + " SIGKILLs, " + terminations + " backends terminated, 1 server restart; attempts: "
          + runs.values().stream().mapToInt(List::size).sum() + "; run again after an ended attempt: "
          + rerunAfterEffect + ", after an interrupted one: " + interrupted + "; overlaps: " + overlaps);
      assertThat(overlaps).as("attempts of one job at the same time: " + examples).isZero();
    }
  }

  /** A kill (node) or the restart (node null), from just before it to when it was over. */
  private record Outage(String node, Instant at, Instant until) {}

  /**
   * When the attempt's worker was last surely connected: the start of the first outage of its node
   * (or of everybody) that was not over a lease or more before the attempt started; null if none.
   */
  private static Instant outageAfter(Run run, List<Outage> outages) {
    Instant first = null;
    for (Outage o : outages) {
      boolean hits = o.node() == null || o.node().equals(run.node());
      // An attempt may start up to a lease after its worker's session was ended under it (a terminated
      // backend: the worker believes, and starts jobs it claimed ahead, until it notices, at the latest
      // at the lease deadline); such an attempt owned nothing, so the outage counts for it too.
      if (hits && o.until().isAfter(run.start().minus(WORKER_LEASE)) && (first == null || o.at().isBefore(first))) {
        first = o.at();
      }
    }
    return first;
  }
}
