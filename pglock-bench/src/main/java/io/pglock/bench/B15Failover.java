package io.pglock.bench;

import io.pglock.LockHandle;
import io.pglock.LockSessionException;
import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.election.Candidate;
import io.pglock.election.LeaderElection;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobRequest;
import io.pglock.schedule.Schedule;
import io.pglock.schedule.Scheduler;
import io.pglock.schedule.Task;
import io.pglock.testing.PrivateServer;
import io.pglock.testing.ReplicatedPair;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;

/**
 * B15 (issue 17): how long after a PostgreSQL failover pglock works again. Each trial starts a fresh
 * {@link ReplicatedPair} (a primary and its synchronous streaming standby, private servers of the
 * run), and in this JVM two nodes, A and B, each with a {@link PgLocks} (lease {@link #LEASE}) over
 * pgjdbc's multi-host URL: a session lock held on A, both nodes candidates of one election, a
 * {@link Scheduler} on each running one fixed-rate 1-s task, and a {@link JobQueue} worker on each
 * fed by an enqueuer thread (a job every {@link #ENQUEUE_EVERY}, through a {@code PgLocks} of its
 * own, failures during the outage ignored). Then {@link ReplicatedPair#failover()} (the primary
 * killed with {@code pg_ctl stop -m immediate}, the standby promoted), and from the promotion: (0) a
 * plain connection through the same URL answering {@code SELECT 1} (what pgjdbc alone takes), (1)
 * locks grantable again (a third {@code PgLocks} tries the held lock until it is granted), (2) a leader
 * elected (the first {@code elected} callback after it), (3) the next slot run, (4) jobs running again
 * (the first handler call after it); also the time from the kill to the promotion. Each figure is
 * given as p50 and max over the trials. No goal: the floor of (1) to (4) is the lease, since a lock
 * session on a new primary takes no lock until a lease has passed since it became primary
 * ({@code V14__failover_quarantine.sql}).
 */
final class B15Failover implements Benchmark {
  static final Duration LEASE = Duration.ofSeconds(5);
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
  static final int DEFAULT_TRIALS = 5;
  static final Duration ENQUEUE_EVERY = Duration.ofMillis(20);
  /** How long a trial waits for its warm-up, and for each measure after the promotion. */
  static final Duration DEADLINE = Duration.ofSeconds(60);
  static final String NAMESPACE = "b15";
  static final String QUEUE = "b15";
  static final String[] MEASURES = {"kill to promotion", "a connection to the new primary (raw pgjdbc)",
      "locks grantable again", "a leader elected", "the next slot run", "jobs running again"};
  /** Index in {@link #MEASURES} of the first measure that needs a lock session (the lease is its floor). */
  static final int FIRST_LOCKING = 2;

  @Override
  public String id() {
    return "B15";
  }

  @Override
  public String title() {
    return "back after a PostgreSQL failover: locks, leader, slots and jobs (primary killed, standby promoted)";
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    int trials = o.trialsGiven() ? o.trials() : DEFAULT_TRIALS;
    // pgjdbc logs (java.util.logging) each connection it cannot close to the dead primary, with a stack trace
    java.util.logging.Logger pgjdbc = java.util.logging.Logger.getLogger("org.postgresql");
    java.util.logging.Level level = pgjdbc.getLevel();
    pgjdbc.setLevel(java.util.logging.Level.OFF);
    try {
      return measure(trials);
    } finally {
      pgjdbc.setLevel(level);
    }
  }

  private Report measure(int trials) {
    Report r = new Report(id(), title());
    List<double[]> done = new ArrayList<>(); // per trial: ms for each of MEASURES
    for (int t = 1; t <= trials; t++) {
      long t0 = System.nanoTime();
      double[] ms;
      try {
        ms = trial(t);
      } catch (PrivateServer.Unavailable e) {
        r.info("back after a failover", "-", "not run: " + e.getMessage(), "-");
        return r;
      } catch (Exception e) {
        r.errors.add("trial " + t + ": " + e);
        r.note("trial %d: ERROR %s", t, e);
        continue;
      }
      done.add(ms);
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < MEASURES.length; i++) {
        b.append(i == 0 ? "" : ", ").append(MEASURES[i]).append(' ').append(Report.fmt("%.0f ms", ms[i]));
      }
      r.note("trial %d (%.0f s): %s", t, (System.nanoTime() - t0) / 1e9, b);
    }
    if (done.isEmpty()) {
      r.info("back after a failover", "-", "no trial completed", "-");
      return r;
    }
    List<String[]> rows = new ArrayList<>();
    for (int i = 0; i < MEASURES.length; i++) {
      double[] v = new double[done.size()];
      for (int t = 0; t < v.length; t++) {
        v[t] = done.get(t)[i];
      }
      double p50 = LossLatency.percentile(v, 0.5);
      double max = LossLatency.percentile(v, 1.0);
      String from = i == 0 ? "from the kill" : "from the promotion";
      boolean locking = i >= FIRST_LOCKING;
      String floor = locking ? Report.fmt("floor: lease %d ms", LEASE.toMillis()) : "-";
      r.info(Report.fmt("%s, %s, p50 / max of %d", MEASURES[i], from, v.length), floor,
          Report.fmt("%.0f / %.0f ms", p50, max), locking ? Report.fmt("%.2fx lease", p50 / LEASE.toMillis()) : "-");
      rows.add(new String[] {MEASURES[i], from, Report.fmt("%.0f", p50), Report.fmt("%.0f", max),
          locking ? Report.fmt("%d", LEASE.toMillis()) : "-", Integer.toString(v.length)});
    }
    System.out.print(Report.render(new String[] {"measure", "from", "p50 ms", "max ms", "lease ms", "trials"}, rows));
    r.note("synchronous replication; every PgLocks with lease %d ms, connectTimeout %d s; pgjdbc multi-host URL with"
        + " targetServerType=primary&hostRecheckSeconds=1; the floor of the four measures after the promotion is the"
        + " lease (V14's lock quarantine)", LEASE.toMillis(), CONNECT_TIMEOUT.toSeconds());
    return r;
  }

  /** One failover; returns the ms of each of {@link #MEASURES}. */
  private static double[] trial(int t) throws Exception {
    try (ReplicatedPair pair = ReplicatedPair.start(true,
        primary -> PgLockSchema.migrate(primary, PgLockSchema.DEFAULT_SCHEMA), "max_connections=60")) {
      DataSource ds = pair.dataSource("bench-b15");
      ConcurrentLinkedQueue<Long> elected = new ConcurrentLinkedQueue<>();
      ConcurrentLinkedQueue<Long> slotRuns = new ConcurrentLinkedQueue<>();
      ConcurrentLinkedQueue<Long> jobRuns = new ConcurrentLinkedQueue<>();
      AtomicBoolean enqueuing = new AtomicBoolean(true);
      AtomicInteger enqueueFailures = new AtomicInteger();
      List<AutoCloseable> open = new ArrayList<>();
      Thread enqueuer = null;
      try {
        List<PgLocks> nodes = new ArrayList<>();
        for (String node : List.of("a", "b")) {
          PgLocks locks = locks(ds, node);
          open.add(locks);
          nodes.add(locks);
        }
        LockHandle held = nodes.get(0).lock("held").tryAcquire()
            .orElseThrow(() -> new IllegalStateException("lock held not granted before the failover"));
        open.add(held);
        for (int i = 0; i < nodes.size(); i++) {
          open.add(LeaderElection.join(nodes.get(i), "b15", new Candidate() {
            @Override
            public void elected(Term term) {
              elected.add(System.nanoTime());
            }

            @Override
            public void revoked(Term term, Revocation reason) {}
          }));
          Scheduler s = Scheduler.builder(nodes.get(i)).pollInterval(Duration.ofMillis(200))
              .sweepInterval(Duration.ofMillis(500)).closeTimeout(Duration.ofSeconds(5)).build();
          open.add(s);
          s.register(Task.builder("tick", Schedule.fixedRate(Duration.ofSeconds(1)))
              .build(ctx -> slotRuns.add(System.nanoTime())));
          s.start();
          JobQueue q = JobQueue.builder(nodes.get(i)).build();
          open.add(q);
          open.add(q.worker(QUEUE).concurrency(2).pollInterval(Duration.ofMillis(200))
              .rescueInterval(Duration.ofMillis(100)).shutdownTimeout(Duration.ZERO)
              .handler("tick", Map.class, (payload, job) -> jobRuns.add(System.nanoTime())).start());
        }
        PgLocks enqueueLocks = locks(ds, "enqueuer");
        open.add(enqueueLocks);
        JobQueue enqueueQueue = JobQueue.builder(enqueueLocks).build();
        open.add(enqueueQueue);
        enqueuer = new Thread(() -> {
          int n = 0;
          while (enqueuing.get()) {
            try {
              enqueueQueue.enqueue(JobRequest.of("tick", Map.of("i", n++)).queue(QUEUE));
            } catch (RuntimeException e) {
              enqueueFailures.incrementAndGet(); // no primary during the outage
            }
            try {
              Thread.sleep(ENQUEUE_EVERY.toMillis());
            } catch (InterruptedException e) {
              return;
            }
          }
        }, "b15-enqueuer-" + t);
        enqueuer.setDaemon(true);
        enqueuer.start();
        PgLocks probe = locks(ds, "probe");
        open.add(probe);

        await("a leader, a slot run and jobs run before the failover", System.nanoTime(),
            () -> !elected.isEmpty() && !slotRuns.isEmpty() && jobRuns.size() >= 5);

        ReplicatedPair.Failover failover = pair.failover();
        long promoted = failover.promotedAt();

        long connected = awaitConnection(ds, promoted);
        long granted = awaitGrant(probe, promoted);
        await("a leader elected after the promotion", promoted, () -> after(elected, promoted) > 0);
        await("a slot run after the promotion", promoted, () -> after(slotRuns, promoted) > 0);
        await("a job run after the promotion", promoted, () -> after(jobRuns, promoted) > 0);
        return new double[] {ms(promoted - failover.killedAt()), ms(connected - promoted), ms(granted - promoted),
            ms(after(elected, promoted) - promoted), ms(after(slotRuns, promoted) - promoted),
            ms(after(jobRuns, promoted) - promoted)};
      } finally {
        enqueuing.set(false);
        if (enqueuer != null) {
          enqueuer.interrupt();
          enqueuer.join(TimeUnit.SECONDS.toMillis(15));
        }
        for (int i = open.size() - 1; i >= 0; i--) {
          try {
            open.get(i).close();
          } catch (Exception e) {
            // closing after the failover: sessions on the dead primary may fail to close cleanly
          }
        }
      }
    }
  }

  private static PgLocks locks(DataSource ds, String node) {
    return PgLocks.builder(ds).namespace(NAMESPACE).nodeName(node).lease(LEASE).connectTimeout(CONNECT_TIMEOUT)
        .build();
  }

  /**
   * Opens connections through the multi-host URL (a fresh one each time, as pgjdbc's host status cache
   * decides where it goes) until one answers a statement; returns when.
   */
  private static long awaitConnection(DataSource ds, long from) throws InterruptedException {
    long deadline = from + DEADLINE.toNanos();
    while (true) {
      try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
        s.execute("SELECT 1");
        return System.nanoTime();
      } catch (SQLException e) {
        // no primary yet, or pgjdbc still takes the promoted standby for a standby (hostRecheckSeconds)
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("no connection to a primary within " + DEADLINE + " of the promotion");
      }
      TimeUnit.MILLISECONDS.sleep(10);
    }
  }

  /** Tries the lock held on A before the failover until the new primary grants it; returns when. */
  private static long awaitGrant(PgLocks probe, long from) throws InterruptedException {
    long deadline = from + DEADLINE.toNanos();
    while (true) {
      try {
        Optional<LockHandle> h = probe.lock("held").tryAcquire();
        if (h.isPresent()) {
          long now = System.nanoTime();
          h.get().close();
          return now;
        }
      } catch (LockSessionException e) {
        // no primary yet, or the session still waits out the quarantine
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the lock was not granted within " + DEADLINE + " of the promotion");
      }
      TimeUnit.MILLISECONDS.sleep(10);
    }
  }

  /** The first reading after {@code from}, or 0 if none. */
  private static long after(ConcurrentLinkedQueue<Long> readings, long from) {
    long first = 0;
    for (long r : readings) {
      if (r > from && (first == 0 || r < first)) {
        first = r;
      }
    }
    return first;
  }

  private static void await(String what, long from, BooleanSupplier condition) throws InterruptedException {
    long deadline = from + DEADLINE.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("no " + what + " within " + DEADLINE);
      }
      TimeUnit.MILLISECONDS.sleep(20);
    }
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }
}
