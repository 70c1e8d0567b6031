package io.pglock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.PgLocks;
import io.pglock.queue.JobAdmin;
import io.pglock.queue.JobQueue;
import io.pglock.spring.health.PgLockHealth;
import io.pglock.testing.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two application contexts of the same app side by side, as two nodes of a fleet on the real test
 * database: annotated tasks run once per slot, a leader-only bean runs on one node and moves when
 * that node's context closes, a transactional enqueue goes with its transaction, a ShedLock-style
 * method runs on one node at a time, and nothing is left on the server after the contexts close.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FleetTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private final String namespace = SpringFleet.namespace("fleet");
  private final String nodeA = "spring-a-" + namespace.substring(namespace.length() - 8);
  private final String nodeB = "spring-b-" + namespace.substring(namespace.length() - 8);
  private ConfigurableApplicationContext a;
  private ConfigurableApplicationContext b;

  @BeforeAll
  void start() {
    FleetApp.reset();
    a = SpringFleet.start(FleetApp.class, namespace, nodeA, "test.at-least=3s");
    b = SpringFleet.start(FleetApp.class, namespace, nodeB, "test.at-least=3s");
  }

  @AfterAll
  void stop() {
    if (a != null) {
      a.close();
    }
    if (b != null) {
      b.close();
    }
  }

  @Test
  @Order(1)
  void annotatedTaskRunsOncePerSlotAcrossTheContexts() {
    Await.until("4 slots of every-second have run", WAIT, () -> FleetApp.SLOTS.size() >= 4);
    for (Map.Entry<Instant, Queue<String>> slot : FleetApp.SLOTS.entrySet()) {
      assertThat(slot.getValue()).as("runs of slot %s", slot.getKey()).hasSize(1);
    }
    assertThat(FleetApp.SLOTS.values().stream().flatMap(Queue::stream).map(r -> r.substring(0, r.indexOf('#'))))
        .allMatch(n -> n.equals(nodeA) || n.equals(nodeB));
  }

  @Test
  @Order(2)
  void leaderOnlyBeanRunsOnOneContext() {
    Await.until("one node leads reports", WAIT, () -> FleetApp.leaders().size() == 1);
    String leader = FleetApp.leaders().get(0);
    assertThat(FleetApp.EVENTS).contains(leader + ":reports:elected");
    assertThat(FleetApp.leaders()).containsExactly(leader);
  }

  @Test
  @Order(3)
  void transactionalEnqueueRollsBackWithItsTransaction() {
    FleetApp.Signups signups = a.getBean(FleetApp.Signups.class);
    JobAdmin admin = a.getBean(JobQueue.class).admin();
    assertThatThrownBy(() -> signups.signUp("rolled-back", true)).isInstanceOf(IllegalStateException.class);
    long committed = signups.signUp("committed", false);
    Await.until("the committed greeting is handled", WAIT,
        () -> FleetApp.HANDLED.stream().anyMatch(h -> h.contains(":committedx1@1")));
    assertThat(admin.job(committed)).isPresent();
    assertThat(FleetApp.HANDLED).noneMatch(h -> h.contains("rolled-back"));
    assertThat(FleetApp.HANDLED).filteredOn(h -> h.contains("committed")).hasSize(1);
  }

  @Test
  @Order(4)
  void schedulerLockMethodRunsOnOneNodeAtATime() throws Exception {
    FleetApp.Tasks onA = a.getBean(FleetApp.Tasks.class);
    FleetApp.Tasks onB = b.getBean(FleetApp.Tasks.class);
    CountDownLatch gate = new CountDownLatch(1);
    FleetApp.lockedGate = gate;
    CompletableFuture<Void> first = CompletableFuture.runAsync(() -> {
      try {
        onA.report();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    Await.until("node A runs report", WAIT, () -> FleetApp.LOCKED_RUNS.get() == 1);
    onB.report(); // skipped: A holds the lock
    assertThat(FleetApp.LOCKED_RUNS.get()).isEqualTo(1);
    gate.countDown();
    first.get(60, TimeUnit.SECONDS);
    long returned = System.nanoTime();
    onB.report(); // A returned, but lockAtLeastFor = 3 s keeps its lock
    boolean withinAtLeast = System.nanoTime() - returned < Duration.ofSeconds(2).toNanos();
    if (withinAtLeast) {
      assertThat(FleetApp.LOCKED_RUNS.get()).as("a call within lockAtLeastFor is skipped").isEqualTo(1);
    }
    Await.until("after lockAtLeastFor node B runs report", WAIT, () -> {
      try {
        onB.report();
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
      return FleetApp.LOCKED_RUNS.get() == 2;
    });
  }

  @Test
  @Order(5)
  void healthIsUpOnTheLeaderAndTheStandby() throws Exception {
    for (ConfigurableApplicationContext c : new ConfigurableApplicationContext[] {a, b}) {
      PgLockHealth.Result health = c.getBean(PgLockHealth.class).check();
      assertThat(health.up()).as("%s", health.details()).isTrue();
      assertThat(health.details()).containsKeys("namespace", "node", "heldLocks", "schemaVersion", "elections",
          "leaseMarginMs");
      assertThat((Long) health.details().get("leaseMarginMs")).as("a healthy session's margin")
          .isPositive().isLessThanOrEqualTo(30_000L);
      // the Actuator indicator of the Boot the test runs on (3.5 here, 4.0 in pglock-spring-boot4-tests)
      Object indicator = c.getBean("pglockHealthIndicator");
      String boot = org.springframework.boot.SpringBootVersion.getVersion();
      assertThat(indicator.getClass().getSimpleName()).isEqualTo("Boot" + boot.charAt(0) + "PgLockHealthIndicator");
      Object result = indicator.getClass().getMethod("health").invoke(indicator);
      Object status = result.getClass().getMethod("getStatus").invoke(result);
      assertThat(status.getClass().getMethod("getCode").invoke(status)).isEqualTo("UP");
    }
  }

  @Test
  @Order(6)
  void leaderOnlyBeanMovesWhenItsContextCloses() throws Exception {
    String leader = FleetApp.leaders().get(0);
    ConfigurableApplicationContext leading = leader.equals(nodeA) ? a : b;
    String standby = leader.equals(nodeA) ? nodeB : nodeA;
    leading.close();
    assertThat(FleetApp.LEADING.get(leader)).as("the closed node's bean was stopped").isFalse();
    assertThat(FleetApp.EVENTS).contains(leader + ":reports:revoked");
    Await.until("the standby leads reports", WAIT, () -> FleetApp.leaders().equals(java.util.List.of(standby)));
    Await.until("the closed node left nothing on the server", WAIT, () -> {
      try {
        return SpringFleet.backends(leader).isEmpty();
      } catch (java.sql.SQLException e) {
        throw new AssertionError(e);
      }
    });
    assertThat(leading.isActive()).isFalse();
    assertThatThrownBy(() -> leading.getBean(PgLocks.class))
        .isInstanceOf(IllegalStateException.class);
  }
}
