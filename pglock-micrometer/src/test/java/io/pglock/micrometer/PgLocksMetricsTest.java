package io.pglock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pglock.LockHandle;
import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.election.Candidate;
import io.pglock.election.LeaderElection;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The core's meters against the real database: acquires, held locks, losses, leadership. */
@ExtendWith(NoLeakedLocks.class)
class PgLocksMetricsTest extends MetricsTestSupport {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private final String namespace = "metrics-" + UUID.randomUUID().toString().substring(0, 8);
  private final String node = "m-" + UUID.randomUUID().toString().substring(0, 8);
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final PgLocksMetrics metrics = new PgLocksMetrics(registry);

  @AfterEach
  void closeAll() throws Exception {
    closeOpen();
  }

  private PgLocks locks(String nodeName, boolean withMetrics) {
    var b = PgLocks.builder(TestDatabase.get().dataSource()).namespace(namespace).nodeName(nodeName);
    PgLocks locks = (withMetrics ? b.listener(metrics) : b).build();
    open.add(locks);
    return locks;
  }

  private Timer acquireTimer(String mode, String wait, String outcome) {
    return registry.find(PgLocksMetrics.ACQUIRE).tags("namespace", namespace, "mode", mode, "wait", wait,
        "outcome", outcome).timer();
  }

  @Test
  void acquire_recordsAcquired_andABusyTry_recordsNotAcquired_andHeldGauge_countsTheLock() throws Exception {
    PgLocks locks = locks(node, true);
    metrics.bind(locks);
    PgLocks other = locks(node + "-o", false);
    try (LockHandle h = locks.lock("a").acquire(Duration.ofSeconds(10))) {
      assertThat(h.isHeld()).isTrue();
      Timer acquired = acquireTimer("EXCLUSIVE", "wait", "ACQUIRED");
      assertThat(acquired).isNotNull();
      assertThat(acquired.count()).isEqualTo(1);
      assertThat(registry.get(PgLocksMetrics.HELD).tag("namespace", namespace).gauge().value()).isEqualTo(1);
      assertThat(registry.get(PgLocksMetrics.SESSIONS).tag("namespace", namespace).gauge().value())
          .isGreaterThanOrEqualTo(1);
    }
    try (LockHandle busy = other.lock("b").tryAcquire().orElseThrow()) {
      assertThat(locks.lock("b").tryAcquire()).isEmpty();
      Timer notAcquired = acquireTimer("EXCLUSIVE", "try", "NOT_ACQUIRED");
      assertThat(notAcquired).isNotNull();
      assertThat(notAcquired.count()).isEqualTo(1);
      assertThat(busy.isHeld()).isTrue();
    }
    // only this namespace's meters, and no lock name among the tags
    assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTags())
        .noneMatch(t -> t.getValue().equals("a") || t.getValue().equals("b")));
    locks.close();
    assertThat(registry.get(PgLocksMetrics.HELD).tag("namespace", namespace).gauge().value()).isZero();
  }

  @Test
  void terminatedLockSession_countsLost_connectionLost() throws Exception {
    PgLocks locks = locks(node, true);
    LockHandle h = locks.lock("doomed").tryAcquire().orElseThrow();
    open.add(h);
    List<Integer> pids = lockSessionPids(node);
    assertThat(pids).hasSize(1);
    terminate(pids.get(0));
    Await.until("the loss counted", WAIT, () -> {
      Counter c = registry.find(PgLocksMetrics.LOST).tags("namespace", namespace, "cause", "CONNECTION_LOST")
          .counter();
      return c != null && c.count() == 1;
    });
    assertThat(h.isHeld()).isFalse();
  }

  @Test
  void election_leaderGauge_is1WhileLeading_and0AfterClose() throws Exception {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA); // elections are fenced
    PgLocks locks = locks(node, true);
    LeaderElection election = LeaderElection.builder(locks, "leader-gauge").join(new Candidate() {
      @Override
      public void elected(Term term) {}

      @Override
      public void revoked(Term term, Revocation reason) {}
    });
    open.add(election);
    Await.until("the leader gauge at 1", WAIT, () -> leaderGauge() != null && leaderGauge().value() == 1);
    assertThat(election.isLeader()).isTrue();
    election.close();
    assertThat(leaderGauge().value()).isZero();
  }

  private Gauge leaderGauge() {
    return registry.find(PgLocksMetrics.LEADER).tags("namespace", namespace, "election", "leader-gauge").gauge();
  }

  /** The backend pids of this test's node's lock sessions, by application_name. */
  private static List<Integer> lockSessionPids(String node) throws Exception {
    List<Integer> pids = new ArrayList<>();
    try (Connection c = TestDatabase.get().connect(); PreparedStatement ps = c.prepareStatement("""
        SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND application_name LIKE 'pglock:' || ? || ':lock-%'""")) {
      ps.setString(1, node);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          pids.add(rs.getInt(1));
        }
      }
    }
    return pids;
  }

  private static void terminate(int pid) throws Exception {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
      ps.setInt(1, pid);
      ps.execute();
    }
  }
}
