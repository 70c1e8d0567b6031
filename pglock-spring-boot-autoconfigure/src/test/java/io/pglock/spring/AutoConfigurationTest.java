package io.pglock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pglock.LockHandle;
import io.pglock.PgLocks;
import io.pglock.queue.JobContext;
import io.pglock.queue.JobQueue;
import io.pglock.schedule.Scheduler;
import io.pglock.spring.boot.PgLockAutoConfiguration;
import io.pglock.spring.boot.PgLockHealthAutoConfiguration;
import io.pglock.spring.boot.PgLockIntegrationAutoConfiguration;
import io.pglock.spring.boot.PgLockMetricsAutoConfiguration;
import io.pglock.spring.boot.PgLockQueueAutoConfiguration;
import io.pglock.spring.boot.PgLockSchedulerAutoConfiguration;
import io.pglock.spring.health.PgLockHealth;
import io.pglock.spring.integration.PgLockRegistry;
import io.pglock.spring.leader.LeaderOnly;
import io.pglock.spring.queue.PgJobHandler;
import io.pglock.spring.queue.SpringJobQueue;
import io.pglock.spring.scheduling.PgScheduled;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.OwnedBackends;
import io.pglock.testing.TestDatabase;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The auto-configuration's conditions and settings, with {@link ApplicationContextRunner} on the
 * real test database: what it creates, where it backs off, what it refuses and how it says so.
 */
@ExtendWith(NoLeakedLocks.class)
class AutoConfigurationTest {
  private final String namespace = SpringFleet.namespace("autoconf");

  /** The jobs the annotated handlers of these tests ran: deleted, so that the shared table keeps none. */
  @org.junit.jupiter.api.AfterAll
  static void deleteJobs() throws java.sql.SQLException {
    try (java.sql.Connection c = TestDatabase.get().connect(); java.sql.Statement s = c.createStatement()) {
      s.execute("DELETE FROM pglock.job WHERE queue IN ('autoconf-q', 'autoconf-traced')");
    }
  }

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(PgLockAutoConfiguration.class, PgLockMetricsAutoConfiguration.class,
          PgLockSchedulerAutoConfiguration.class, PgLockQueueAutoConfiguration.class,
          PgLockHealthAutoConfiguration.class, PgLockIntegrationAutoConfiguration.class))
      .withPropertyValues("pglock.namespace=" + namespace);

  @Configuration(proxyBeanMethods = false)
  static class Pool {
    @Bean(destroyMethod = "close")
    HikariDataSource dataSource(org.springframework.core.env.Environment env) {
      HikariDataSource pool = new HikariDataSource();
      pool.setDataSource(OwnedBackends.recording(TestDatabase.get().dataSource("autoconf-pool")));
      pool.setMaximumPoolSize(env.getProperty("test.pool-size", Integer.class, 12));
      pool.setMinimumIdle(0);
      pool.setConnectionTimeout(30_000);
      return pool;
    }
  }

  @Test
  void createsEachBeanFromTheApplicationsDataSourceWithItsProperties() {
    runner.withUserConfiguration(Pool.class)
        .withPropertyValues("pglock.node-name=autoconf-node", "pglock.lease=7s", "pglock.wait-sessions=1")
        .run(context -> {
          assertThat(context).hasNotFailed();
          PgLocks locks = context.getBean(PgLocks.class);
          assertThat(locks.config().namespace()).isEqualTo(namespace);
          assertThat(locks.config().nodeName()).isEqualTo("autoconf-node");
          assertThat(locks.config().lease()).isEqualTo(Duration.ofSeconds(7));
          assertThat(locks.config().waitSessions()).isEqualTo(1);
          assertThat(locks.config().dataSource()).isSameAs(context.getBean(DataSource.class));
          assertThat(context).hasSingleBean(Scheduler.class).hasSingleBean(PgLockRegistry.class)
              .hasSingleBean(PgLockHealth.class);
          assertThat(context.getBean(JobQueue.class)).isInstanceOf(SpringJobQueue.class);
        });
  }

  @Test
  void theNamespaceDefaultsToTheApplicationsName() {
    runner.withUserConfiguration(Pool.class).withPropertyValues("pglock.namespace=", "spring.application.name=billing-" + namespace.hashCode())
        .run(context -> assertThat(context.getBean(PgLocks.class).config().namespace())
            .isEqualTo("billing-" + namespace.hashCode()));
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnLocks {
    @Bean(destroyMethod = "close")
    PgLocks myLocks(DataSource dataSource) {
      return PgLocks.builder(dataSource).namespace("mine").build();
    }
  }

  @Test
  void backsOffWhenTheApplicationDefinesItsOwnPgLocks() {
    runner.withUserConfiguration(Pool.class, OwnLocks.class).run(context -> {
      assertThat(context).hasSingleBean(PgLocks.class).hasBean("myLocks").doesNotHaveBean("pgLocks");
      assertThat(context.getBean(PgLocks.class).config().namespace()).isEqualTo("mine");
      assertThat(context).hasSingleBean(Scheduler.class); // built on the application's PgLocks
    });
  }

  @Test
  void createsNothingWhenDisabledOrWithoutADataSource() {
    runner.withUserConfiguration(Pool.class).withPropertyValues("pglock.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(PgLocks.class).doesNotHaveBean(Scheduler.class));
    runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(PgLocks.class)
        .doesNotHaveBean(JobQueue.class));
    runner.withUserConfiguration(Pool.class).withPropertyValues("pglock.scheduler.enabled=false", "pglock.queue.enabled=false")
        .run(context -> assertThat(context).hasSingleBean(PgLocks.class).doesNotHaveBean(Scheduler.class)
            .doesNotHaveBean(JobQueue.class));
  }

  @Test
  void aBadSettingFailsTheStartNamingIt() {
    runner.withUserConfiguration(Pool.class).withPropertyValues("pglock.lease=100ms")
        .run(context -> assertThat(context).getFailure().rootCause()
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease"));
    runner.withUserConfiguration(Pool.class).withPropertyValues("pglock.schema.name=Bad-Name")
        .run(context -> assertThat(context).getFailure().rootCause()
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Bad-Name"));
  }

  @Test
  void warnsWhenThePoolLeavesTheApplicationTooFewConnections() {
    runner.withUserConfiguration(Pool.class, OneHandler.class).withPropertyValues("test.pool-size=5")
        .run(context -> {
          assertThat(context).hasNotFailed();
          Object report = context.getBean("pgLockPoolSizeReport");
          java.lang.reflect.Method warning = report.getClass().getDeclaredMethod("warning");
          warning.setAccessible(true);
          assertThat((String) warning.invoke(report)).contains("of the pool's 5 connections")
              .contains("spring.datasource.hikari.maximum-pool-size");
        });
    runner.withUserConfiguration(Pool.class).withPropertyValues("test.pool-size=30").run(context -> {
      Object report = context.getBean("pgLockPoolSizeReport");
      java.lang.reflect.Method warning = report.getClass().getDeclaredMethod("warning");
      warning.setAccessible(true);
      assertThat(warning.invoke(report)).isNull();
    });
  }

  static class OneHandler {
    @PgJobHandler(kind = "noop", queue = "autoconf-q")
    void handle(String json, JobContext job) {}
  }

  static class TwoSchedules {
    @PgScheduled(cron = "0 * * * * *", fixedRate = "1m")
    void both() {}
  }

  static class NoPayload {
    @PgJobHandler(kind = "nothing")
    void handle() {}
  }

  @LeaderOnly("reports")
  static class NotALifecycle {}

  @Test
  void aBadAnnotationFailsTheStartNamingTheMethodAndTheFix() {
    runner.withUserConfiguration(Pool.class, TwoSchedules.class).run(context -> assertThat(context).getFailure()
        .rootCause().hasMessageContaining("TwoSchedules.both").hasMessageContaining("exactly one of cron, fixedRate and fixedDelay"));
    runner.withUserConfiguration(Pool.class, NoPayload.class).run(context -> assertThat(context).getFailure()
        .rootCause().hasMessageContaining("NoPayload.handle").hasMessageContaining("(payload, JobContext)"));
    runner.withUserConfiguration(Pool.class, NotALifecycle.class).run(context -> assertThat(context).getFailure()
        .rootCause().hasMessageContaining("must implement org.springframework.context.Lifecycle"));
  }

  @Configuration(proxyBeanMethods = false)
  static class Registry {
    @Bean
    SimpleMeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }
  }

  @Test
  void bindsMetersToTheApplicationsRegistry() {
    runner.withUserConfiguration(Pool.class, Registry.class).run(context -> {
      MeterRegistry meters = context.getBean(MeterRegistry.class);
      PgLocks locks = context.getBean(PgLocks.class);
      try (LockHandle h = locks.lock("metered").acquire(Duration.ofSeconds(30))) {
        assertThat(h.isHeld()).isTrue();
        assertThat(meters.get("pglock.locks.held").gauge().value()).isEqualTo(1.0);
      }
      assertThat(meters.get("pglock.locks.acquire").tag("outcome", "ACQUIRED").timer().count()).isEqualTo(1);
    });
    runner.withUserConfiguration(Pool.class, Registry.class).withPropertyValues("pglock.metrics.enabled=false")
        .run(context -> assertThat(context.getBean(MeterRegistry.class).find("pglock.locks.acquire").timer()).isNull());
  }

  @Configuration(proxyBeanMethods = false)
  static class Telemetry {
    static final io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter SPANS =
        io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter.create();

    @Bean
    io.opentelemetry.api.OpenTelemetry openTelemetry() {
      return io.opentelemetry.sdk.OpenTelemetrySdk.builder()
          .setTracerProvider(io.opentelemetry.sdk.trace.SdkTracerProvider.builder()
              .addSpanProcessor(io.opentelemetry.sdk.trace.export.SimpleSpanProcessor.create(SPANS)).build())
          .setPropagators(io.opentelemetry.context.propagation.ContextPropagators.create(
              io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator.getInstance()))
          .build();
    }
  }

  static class TracedHandler {
    static final java.util.Queue<String> TRACES = new java.util.concurrent.ConcurrentLinkedQueue<>();

    @PgJobHandler(kind = "traced", queue = "autoconf-traced")
    void handle(String json) {
      TRACES.add(io.opentelemetry.api.trace.Span.current().getSpanContext().getTraceId());
    }
  }

  @Test
  @SuppressWarnings("try") // the scope makes the span current; the body does not name it
  void jobsCarryTheEnqueuersTraceWhenTheApplicationHasOpenTelemetry() {
    runner.withUserConfiguration(Pool.class, Telemetry.class, TracedHandler.class).run(context -> {
      io.opentelemetry.api.trace.Tracer tracer = context.getBean(io.opentelemetry.api.OpenTelemetry.class)
          .getTracer("test");
      io.opentelemetry.api.trace.Span parent = tracer.spanBuilder("signup").startSpan();
      try (io.opentelemetry.context.Scope scope = parent.makeCurrent()) {
        context.getBean(JobQueue.class).enqueue(io.pglock.queue.JobRequest.ofJson("traced", "\"x\"")
            .queue("autoconf-traced"));
      } finally {
        parent.end();
      }
      String trace = parent.getSpanContext().getTraceId();
      io.pglock.testing.Await.until("the traced job ran", Duration.ofSeconds(60), () -> TracedHandler.TRACES.contains(trace));
      io.pglock.testing.Await.until("its span was exported", Duration.ofSeconds(60), () -> Telemetry.SPANS.getFinishedSpanItems()
          .stream().anyMatch(sp -> sp.getName().equals("process autoconf-traced") && sp.getTraceId().equals(trace)));
    });
  }

  static class TransactionalHandler {
    static final String TABLE = "autoconf_tx_" + Long.toHexString(System.nanoTime());

    /** The row's write commits with the job's success; the first attempt's write is rolled back with its failure. */
    @PgJobHandler(kind = "tx-add", queue = "autoconf-tx")
    void add(Integer key, io.pglock.queue.JobContext job, java.sql.Connection tx) throws java.sql.SQLException {
      try (java.sql.PreparedStatement ps = tx.prepareStatement("UPDATE " + TABLE + " SET n = n + 1 WHERE key = ?")) {
        ps.setInt(1, key);
        ps.executeUpdate();
      }
      if (job.attempt() == 1) {
        throw new IllegalStateException("after the write: rolled back");
      }
    }
  }

  @Test
  void aHandlerWithAConnection_writesInTheJobsTransaction_exactlyOnce() throws Exception {
    try (java.sql.Connection c = io.pglock.testing.TestDatabase.get().connect();
        java.sql.Statement s = c.createStatement()) {
      s.execute("CREATE TABLE " + TransactionalHandler.TABLE + " (key int PRIMARY KEY, n int NOT NULL DEFAULT 0)");
      s.execute("INSERT INTO " + TransactionalHandler.TABLE + " (key) VALUES (1)");
    }
    try {
      runner.withUserConfiguration(Pool.class, TransactionalHandler.class)
          .withPropertyValues("pglock.queue.worker.poll-interval=200ms").run(context -> {
            assertThat(context).hasNotFailed();
            long id = context.getBean(JobQueue.class).enqueue(io.pglock.queue.JobRequest.of("tx-add", 1)
                .queue("autoconf-tx")).id();
            io.pglock.testing.Await.until("the job succeeded", Duration.ofSeconds(60), () -> context.getBean(JobQueue.class)
                .admin().job(id).map(j -> j.state() == io.pglock.queue.JobState.SUCCEEDED).orElse(false));
            assertThat(context.getBean(JobQueue.class).admin().job(id).orElseThrow().attempt()).isEqualTo(2);
          });
      try (java.sql.Connection c = io.pglock.testing.TestDatabase.get().connect();
          java.sql.Statement s = c.createStatement();
          java.sql.ResultSet rs = s.executeQuery("SELECT n FROM " + TransactionalHandler.TABLE + " WHERE key = 1")) {
        rs.next();
        assertThat(rs.getInt(1)).as("the failed attempt's write rolled back, the second's committed").isEqualTo(1);
      }
    } finally {
      try (java.sql.Connection c = io.pglock.testing.TestDatabase.get().connect();
          java.sql.Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS " + TransactionalHandler.TABLE);
        s.execute("DELETE FROM pglock.job WHERE queue = 'autoconf-tx'");
      }
    }
  }

  static class ShedLockUser {
    static final java.util.concurrent.atomic.AtomicInteger RUNS = new java.util.concurrent.atomic.AtomicInteger();
    static volatile java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(0);

    /** Unchanged ShedLock code: ShedLock's own annotation, no LockProvider, no @EnableSchedulerLock. */
    @net.javacrumbs.shedlock.spring.annotation.SchedulerLock(name = "shedlock-user", lockAtMostFor = "PT1M")
    public void report() throws InterruptedException {
      RUNS.incrementAndGet();
      gate.await(60, java.util.concurrent.TimeUnit.SECONDS);
    }
  }

  @Test
  void shedLocksOwnAnnotationTakesPglocksLock() throws Exception {
    runner.withUserConfiguration(Pool.class, ShedLockUser.class).run(context -> {
      ShedLockUser bean = context.getBean(ShedLockUser.class);
      java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
      ShedLockUser.gate = gate;
      ShedLockUser.RUNS.set(0);
      java.util.concurrent.CompletableFuture<Void> first = java.util.concurrent.CompletableFuture.runAsync(() -> {
        try {
          bean.report();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      io.pglock.testing.Await.until("the first call runs", Duration.ofSeconds(60), () -> ShedLockUser.RUNS.get() == 1);
      assertThat(context.getBean(PgLocks.class).heldLocks()).as("the call holds pglock's lock").isEqualTo(1);
      bean.report(); // skipped: the lock is held
      assertThat(ShedLockUser.RUNS.get()).isEqualTo(1);
      gate.countDown();
      first.get(60, java.util.concurrent.TimeUnit.SECONDS);
      bean.report();
      assertThat(ShedLockUser.RUNS.get()).isEqualTo(2);
    });
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnElection {
    static final java.util.Queue<String> SEEN = new java.util.concurrent.ConcurrentLinkedQueue<>();

    @Bean(destroyMethod = "close")
    io.pglock.election.LeaderElection myElection(PgLocks locks,
        org.springframework.beans.factory.ObjectProvider<io.pglock.spring.scheduling.SchedulerLifecycle> scheduler) {
      return io.pglock.election.LeaderElection.join(locks, "own-election", new io.pglock.election.Candidate() {
        @Override
        public void elected(io.pglock.election.Term term) {
          SEEN.add("elected");
        }

        @Override
        public void revoked(io.pglock.election.Term term, io.pglock.election.Revocation reason) {
          SEEN.add("revoked " + reason + ", scheduler running " + scheduler.getObject().isRunning()
              + ", lock sessions " + locks.openSessions());
        }
      });
    }
  }

  @Test
  void theApplicationsOwnElectionIsClosedFirstAtShutdown() {
    OwnElection.SEEN.clear();
    runner.withUserConfiguration(Pool.class, OwnElection.class).run(context ->
        io.pglock.testing.Await.until("elected", Duration.ofSeconds(60), () -> OwnElection.SEEN.contains("elected")));
    // closed by the context: revoked while the scheduler and PgLocks still ran
    assertThat(OwnElection.SEEN).containsExactly("elected", "revoked SHUTDOWN, scheduler running true, lock sessions 1");
  }
}
