package io.pglock.bench;

import io.pglock.PgLockSchema;
import io.pglock.testing.PrivateServer;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * B9: a per-second task on two fleets of three node JVMs at once, pglock's {@code Scheduler} and
 * ShedLock's {@code executeWithLock}, on a PostgreSQL of the benchmark's own ({@link PrivateServer},
 * so that it may restart it), through the same faults ({@link FaultPlan}): a node of each fleet
 * SIGKILLed every {@code ~15 s} and replaced 2 s later, one node of each always with its clock
 * {@link SlotFleet#SKEW} ahead, and one crash and restart of the server. Every run writes a row
 * ({@link SlotResults}); afterwards {@link SlotCount} counts, per system, the slots of the measured
 * window (the run less a warm-up and a cool-down) run once, twice or more, or never, and how late
 * the runs started. Goals (pglock): no slot twice, none never except those its policies recorded as
 * skipped, lateness p50 at most {@value #GOAL_P50_MS} ms. ShedLock's figures are informational.
 */
final class B9ScheduledSlots implements Benchmark {
  static final Duration FULL_RUN = Duration.ofSeconds(180);
  /** With fewer than {@value #SHORT_BELOW_TRIALS} {@code --trials} (the CI's short run). */
  static final Duration SHORT_RUN = Duration.ofSeconds(45);
  static final int SHORT_BELOW_TRIALS = 10;
  static final Duration KILL_INTERVAL = Duration.ofSeconds(15);
  static final Duration SHORTEST_KILL_INTERVAL = Duration.ofSeconds(8);
  /**
   * Longer than the skew: the skewed node, the last to start before the run, fires 5 s ahead from its
   * first second on, which is part of its start, not of the run's faults.
   */
  static final Duration WARM_UP = Duration.ofSeconds(7);
  static final Duration COOL_DOWN = Duration.ofSeconds(5);
  static final long SEED = 9;
  static final double GOAL_P50_MS = 50;

  @Override
  public String id() {
    return "B9";
  }

  @Override
  public String title() {
    return "scheduled slots under faults (kills, a clock 5 s off, a server restart): pglock vs ShedLock";
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    Duration run = o.b9Seconds() > 0 ? Duration.ofSeconds(o.b9Seconds())
        : o.trials() < SHORT_BELOW_TRIALS ? SHORT_RUN : FULL_RUN;
    // a kill every 15 s in a run of minutes, every 8 s in the short one: still one kill per position
    Duration interval = run.dividedBy(12).compareTo(SHORTEST_KILL_INTERVAL) < 0 ? SHORTEST_KILL_INTERVAL
        : run.dividedBy(12).compareTo(KILL_INTERVAL) > 0 ? KILL_INTERVAL : run.dividedBy(12);
    FaultPlan plan = FaultPlan.draw(SEED, run, interval, COOL_DOWN.plusSeconds(3));
    PrivateServer server;
    try {
      server = PrivateServer.start("max_connections=100");
    } catch (PrivateServer.Unavailable e) {
      Report r = new Report(id(), title());
      r.info("slots under faults", "ShedLock: not run", "not run: " + e.getMessage(), "-");
      return r;
    }
    try (server) {
      return measure(server, run, interval, plan);
    }
  }

  private Report measure(PrivateServer server, Duration run, Duration interval, FaultPlan plan) throws Exception {
    DataSource monitor = server.dataSource("bench-b9-monitor");
    PgLockSchema.migrate(monitor, "pglock");
    try (Connection c = monitor.getConnection(); Statement s = c.createStatement()) {
      s.execute(SlotResults.ddl());
      s.execute(ShedLockTicker.ddl());
    }
    Path dir = Files.createTempDirectory("pglock-bench-b9-");
    File log = dir.resolve("nodes.log").toFile();
    List<String> dbArgs = List.of("url=" + server.jdbcUrl(), "user=postgres");
    List<String> timeline = new ArrayList<>();
    Instant start;
    SlotFleet pglock = new SlotFleet("pglock", dbArgs, log);
    SlotFleet shedlock = new SlotFleet("shedlock", dbArgs, log);
    try (pglock; shedlock) {
      long t = System.nanoTime();
      for (int position = 1; position <= SlotFleet.SIZE; position++) {
        // one JVM at a time: six cold JVMs at once on a small, busy machine starve each other
        pglock.startAndAwait(position);
        shedlock.startAndAwait(position);
      }
      timeline.add(Report.fmt("6 nodes started one after the other in %.1f s", (System.nanoTime() - t) / 1e9));
      start = dbNow(monitor);
      long t0 = System.nanoTime();
      for (FaultPlan.Step step : plan.steps()) {
        paceUntil(t0 + step.at().toNanos(), pglock, shedlock);
        timeline.add(apply(step, t0, server, pglock, shedlock));
      }
      paceUntil(t0 + run.toNanos(), pglock, shedlock);
    }
    Instant from = start.truncatedTo(ChronoUnit.SECONDS).plus(WARM_UP);
    Instant to = start.plus(run).minus(COOL_DOWN).truncatedTo(ChronoUnit.SECONDS);
    SlotCount p;
    SlotCount s;
    List<String> around = new ArrayList<>();
    try (Connection c = monitor.getConnection()) {
      p = SlotCount.of(c, "pglock", from, to, true);
      s = SlotCount.of(c, "shedlock", from, to, false);
      for (Instant never : p.neverSlots().subList(0, Math.min(3, p.neverSlots().size()))) {
        around.add("pglock's task_run up to never-run slot " + never + ":");
        SlotCount.taskRunsBefore(c, never, 3).forEach(line -> around.add("  " + line));
      }
    }
    B9Report.Run facts = new B9Report.Run(run, interval, plan, from, to, timeline, log, pglock, shedlock);
    Report r = B9Report.of(this, facts, p, s);
    around.forEach(line -> r.note("  %s", line));
    boolean pglockClean = p.twice() == 0 && p.never() == 0;
    if (pglockClean && r.errors.isEmpty() && pglock.problems().isEmpty() && shedlock.problems().isEmpty()) {
      B8Failover.deleteTree(dir);
    } else {
      r.note("nodes' stderr kept in %s", log);
    }
    return r;
  }

  /** Applies one step of the plan to both fleets (or to the server); returns its line for the timeline. */
  private static String apply(FaultPlan.Step step, long t0, PrivateServer server, SlotFleet pglock,
      SlotFleet shedlock) throws Exception {
    double at = (System.nanoTime() - t0) / 1e9;
    switch (step.kind()) {
      case KILL -> {
        Contender p = pglock.kill(step.position());
        Contender s = shedlock.kill(step.position());
        return Report.fmt("+%.1f s SIGKILL node %d: %s, %s", at, step.position(), p, s);
      }
      case START -> {
        Contender p = pglock.start(step.position());
        Contender s = shedlock.start(step.position());
        return Report.fmt("+%.1f s start node %d: %s, %s", at, step.position(), p, s);
      }
      case RESTART_SERVER -> {
        long a = System.nanoTime();
        server.stopImmediate();
        long b = System.nanoTime();
        server.startServer();
        long c = System.nanoTime();
        return Report.fmt("+%.1f s server crash (pg_ctl stop -m immediate, %.1f s) and start (pg_ctl start -w,"
            + " crash recovery, %.1f s): refused connections for %.1f s", at, (b - a) / 1e9, (c - b) / 1e9,
            (c - a) / 1e9);
      }
      default -> throw new IllegalStateException(step.kind().name());
    }
  }

  /** Paces the run until a {@link System#nanoTime()} deadline, replacing nodes that exit unasked meanwhile. */
  private static void paceUntil(long deadline, SlotFleet... fleets) throws Exception {
    while (true) {
      for (SlotFleet f : fleets) {
        f.replaceUnaskedExits();
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return;
      }
      LockSupport.parkNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
    }
  }

  private static Instant dbNow(DataSource ds) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT clock_timestamp()")) {
      rs.next();
      return rs.getTimestamp(1).toInstant();
    }
  }
}
