package io.pglock.dashboard;

import io.pglock.LockHandle;
import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.election.Candidate;
import io.pglock.election.LeaderElection;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import io.pglock.ownership.OwnedResource;
import io.pglock.ownership.Owner;
import io.pglock.ownership.Ownership;
import io.pglock.ownership.Release;
import io.pglock.queue.DiscardJobException;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobRequest;
import io.pglock.schedule.Schedule;
import io.pglock.schedule.Scheduler;
import io.pglock.schedule.Task;
import io.pglock.testing.Await;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

/**
 * A small real fleet in a schema of its own, for the dashboard to show: two nodes (alpha, beta) in
 * a namespace of its own ({@code shop-xxxx}); alpha holds {@code inventory} and beta waits for it; an election both
 * join; an ownership group over four partitions; a task that succeeds and one that fails; a queue
 * with succeeded, discarded, retryable and scheduled jobs; a failed hold in the lock history.
 * Everything it opened is closed, and its schema dropped, by {@link #close()}.
 */
final class DashboardFleet implements AutoCloseable {
  static final String QUEUE = "emails";
  final String schema = "dash_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  /**
   * The fleet's namespace, its own: advisory locks are per database, not per schema, so two fleets
   * in one namespace would share the lock inventory and the election billing.
   */
  final String namespace;
  private final List<AutoCloseable> open = new ArrayList<>();
  private final CountDownLatch releaseWaiter = new CountDownLatch(1);
  private Thread waiter;
  final PgLocks alpha;
  final PgLocks beta;
  final JobQueue jobs;

  DashboardFleet() throws Exception {
    this(null);
  }

  /**
   * A fleet in a namespace given, for screenshots that show a plain one ({@code shop}): only one
   * such fleet at a time on a database.
   *
   * @param namespace the namespace, or null for one of its own
   */
  DashboardFleet(String namespace) throws Exception {
    this.namespace = namespace != null ? namespace : "shop-" + schema.substring(5, 9);
    PgLockSchema.migrate(TestDatabase.get().dataSource(), schema);
    alpha = later(locks("alpha"));
    beta = later(locks("beta"));
    jobs = later(JobQueue.builder(alpha).build());
  }

  /** Starts everything the pages show, and waits until the database shows it. */
  DashboardFleet populate() throws Exception {
    LockHandle held = alpha.lock("inventory").acquire(Duration.ofSeconds(30));
    open.add(held);
    waiter = new Thread(() -> {
      try (LockHandle h = beta.lock("inventory").acquire(Duration.ofMinutes(5))) {
        releaseWaiter.await();
      } catch (Exception e) {
        // closed: the test is over
      }
    }, "dashboard-fleet-waiter");
    waiter.setDaemon(true);
    waiter.start();

    Candidate quiet = new Candidate() {
      @Override
      public void elected(Term term) {}

      @Override
      public void revoked(Term term, Revocation reason) {}
    };
    later(LeaderElection.join(alpha, "billing", quiet));
    later(LeaderElection.join(beta, "billing", quiet));
    Owner owner = new Owner() {
      @Override
      public void gained(OwnedResource resource) {}

      @Override
      public void lost(OwnedResource resource, Release why) {}
    };
    List<String> partitions = List.of("p0", "p1", "p2", "p3");
    later(Ownership.join(alpha, "partitions", partitions, owner));
    later(Ownership.join(beta, "partitions", partitions, owner));

    try {
      alpha.lock("audit").withHistory().run(Duration.ofSeconds(30), h -> {
        throw new IllegalStateException("audit ledger is unbalanced");
      });
    } catch (Exception expected) {
      // recorded in the history as failed
    }

    Scheduler scheduler = later(Scheduler.builder(alpha).pollInterval(Duration.ofMillis(200)).build());
    scheduler.register(Task.builder("report", Schedule.fixedRate(Duration.ofSeconds(1))).build(ctx -> {}));
    scheduler.register(Task.builder("flaky", Schedule.fixedRate(Duration.ofSeconds(1))).build(ctx -> {
      throw new IllegalStateException("report server said 502");
    }));
    scheduler.start();

    List<JobRequest> requests = new ArrayList<>();
    for (int i = 1; i <= 20; i++) {
      requests.add(JobRequest.of("send", Map.of("customer", i)).queue(QUEUE));
    }
    requests.add(JobRequest.of("send", Map.of("customer", 99)).queue(QUEUE).delay(Duration.ofHours(1)));
    jobs.enqueueAll(requests);
    later(jobs.worker(QUEUE).concurrency(2).maxAttempts(3).pollInterval(Duration.ofMillis(200))
        .handler("send", Map.class, (payload, ctx) -> {
          Object customer = payload.get("customer");
          if (Integer.valueOf(13).equals(customer)) {
            throw new DiscardJobException("customer 13 has no address");
          }
          if (Integer.valueOf(7).equals(customer)) {
            throw new IllegalStateException("mail server busy");
          }
        }).start());

    Await.until("the fleet shows in the database", Duration.ofSeconds(60), () ->
        count("SELECT count(*) FROM " + schema + ".job WHERE state = 'succeeded'") >= 18
            && count("SELECT count(*) FROM " + schema + ".job WHERE state = 'discarded'") >= 1
            && count("SELECT count(*) FROM " + schema + ".job WHERE attempt >= 1 AND kind = 'send'"
                + " AND payload @> '{\"customer\": 7}' AND jsonb_array_length(errors) >= 1") == 1
            && count("SELECT count(*) FROM " + schema + ".task_run WHERE task = 'flaky' AND state = 'failed'") >= 1
            && count("SELECT count(*) FROM " + schema + ".task_run WHERE task = 'report' AND state = 'succeeded'") >= 1
            && count("SELECT count(*) FROM " + schema + ".locks WHERE name = 'inventory' AND NOT granted") == 1
            && count("SELECT count(*) FROM " + schema + ".locks WHERE name LIKE 'own:partitions:%' AND granted") == 4
            && count("SELECT count(*) FROM " + schema + ".locks WHERE name = 'election:billing' AND granted") == 1);
    return this;
  }

  /** {@return a dashboard over this fleet's schema} */
  DashboardBuilder dashboard() {
    return Dashboard.builder(TestDatabase.get().dataSource("pglock-test-dashboard")).schema(schema)
        .refresh(Duration.ofSeconds(1));
  }

  /** {@return a count read with a query} */
  long count(String sql) {
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@return one text value read with a query and a parameter} */
  String text(String sql, Object param) {
    try (Connection c = TestDatabase.get().connect(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setObject(1, param);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@return the id of the job for a customer} */
  long jobOf(int customer) {
    return Long.parseLong(text("SELECT id FROM " + schema + ".job WHERE payload @> jsonb_build_object('customer', ?::int)",
        customer));
  }

  private PgLocks locks(String node) {
    return PgLocks.builder(TestDatabase.get().dataSource()).schema(schema).namespace(namespace).nodeName(node)
        .lease(Duration.ofSeconds(30)).build();
  }

  <T extends AutoCloseable> T later(T c) {
    open.add(c);
    return c;
  }

  @Override
  public void close() throws Exception {
    releaseWaiter.countDown();
    for (int i = open.size() - 1; i >= 0; i--) {
      try {
        open.get(i).close();
      } catch (Exception e) {
        // closing the rest matters more
      }
    }
    if (waiter != null) {
      waiter.interrupt();
      waiter.join(30_000);
    }
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }
}
