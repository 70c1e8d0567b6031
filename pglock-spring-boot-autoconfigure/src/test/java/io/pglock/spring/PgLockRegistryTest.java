package io.pglock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.PgLocks;
import io.pglock.spring.integration.PgLockRegistry;
import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * {@link PgLockRegistry} as Spring Integration uses it: exclusion between nodes, per-thread
 * reentrancy, a lost lock reported, and {@code LockRegistryLeaderInitiator} moving leadership when
 * the leader's backend is terminated.
 */
@ExtendWith(NoLeakedLocks.class)
class PgLockRegistryTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private final String namespace = SpringFleet.namespace("registry");
  private final PgLocks nodeA = PgLocks.builder(TestDatabase.get().dataSource()).namespace(namespace).nodeName("reg-a")
      .lease(Duration.ofSeconds(5)).build();
  private final PgLocks nodeB = PgLocks.builder(TestDatabase.get().dataSource()).namespace(namespace).nodeName("reg-b")
      .lease(Duration.ofSeconds(5)).build();

  @AfterEach
  void close() {
    nodeA.close();
    nodeB.close();
  }

  @Test
  void locksExcludeOtherNodesAndAreReentrantPerThread() throws Exception {
    PgLockRegistry a = new PgLockRegistry(nodeA);
    PgLockRegistry b = new PgLockRegistry(nodeB);
    Lock onA = a.obtain("orders");
    assertThat(a.obtain("orders")).isSameAs(onA);
    assertThat(onA.tryLock()).isTrue();
    assertThat(onA.tryLock(1, TimeUnit.SECONDS)).as("reentrant on the holding thread").isTrue();
    Lock onB = b.obtain("orders");
    assertThat(onB.tryLock()).as("another node").isFalse();
    assertThat(CompletableFuture.supplyAsync(onA::tryLock).get(30, TimeUnit.SECONDS)).as("another thread").isFalse();
    onA.unlock();
    assertThat(onB.tryLock()).as("still held once").isFalse();
    onA.unlock();
    assertThat(onB.tryLock(30, TimeUnit.SECONDS)).as("free after the last unlock").isTrue();
    assertThatThrownBy(onA::unlock).isInstanceOf(IllegalMonitorStateException.class);
    onB.unlock();
    assertThatThrownBy(onB::newCondition).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void aLostLockAnswersFalseToTheHolderAndItsUnlockSaysSo() throws Exception {
    Lock lock = new PgLockRegistry(nodeA).obtain("lost");
    lock.lock();
    terminateLockSession("reg-a");
    Await.until("the reentrant tryLock sees the loss", WAIT, () -> {
      boolean held = lock.tryLock();
      if (held) {
        lock.unlock();
      }
      return !held;
    });
    assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class).hasMessageContaining("lost");
    Lock onB = new PgLockRegistry(nodeB).obtain("lost");
    assertThat(onB.tryLock(30, TimeUnit.SECONDS)).isTrue();
    onB.unlock();
  }

  @Test
  void springsLeaderInitiatorMovesWhenTheLeadersBackendIsTerminatedAndTheOldLeaderStandsAgain() throws Exception {
    Queue<String> events = new ConcurrentLinkedQueue<>();
    LockRegistryLeaderInitiator a = initiator(nodeA, "reg-a", events);
    a.start();
    Await.until("node A leads", WAIT, () -> events.contains("reg-a granted"));
    LockRegistryLeaderInitiator b = initiator(nodeB, "reg-b", events);
    b.start();
    try {
      long start = System.nanoTime();
      terminateLockSession("reg-a");
      Await.until("node B leads", WAIT, () -> events.contains("reg-b granted"));
      long tookMs = (System.nanoTime() - start) / 1_000_000;
      Await.until("node A was told", WAIT, () -> events.contains("reg-a revoked"));
      System.out.println("LockRegistryLeaderInitiator on PgLockRegistry: leader's backend terminated, new leader after "
          + tookMs + " ms");
      assertThat(events).containsSubsequence("reg-a granted", "reg-b granted");
      // the revoked node stands again: when B leaves, A leads again (the initiator never unlocks
      // after a revocation; a lost lock must not answer false to it for ever)
      b.stop();
      Await.until("node A leads again", WAIT,
          () -> events.stream().filter("reg-a granted"::equals).count() == 2);
    } finally {
      a.stop();
      b.stop();
    }
  }

  private static LockRegistryLeaderInitiator initiator(PgLocks locks, String node, Queue<String> events) {
    LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(new PgLockRegistry(locks),
        new DefaultCandidate(node, "registry-leader") {
          @Override
          public void onGranted(Context ctx) {
            events.add(node + " granted");
          }

          @Override
          public void onRevoked(Context ctx) {
            events.add(node + " revoked");
          }
        });
    return initiator;
  }

  private void terminateLockSession(String node) throws SQLException {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE application_name = ?")) {
      ps.setString(1, "pglock:" + node + ":lock-0:" + namespace);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("the lock session of %s", node).isTrue();
        assertThat(rs.getBoolean(1)).isTrue();
      }
    }
  }
}
