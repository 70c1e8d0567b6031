package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An administrator's {@code pg_terminate_backend} on the lock session: the server frees every lock
 * at once, and the holder must learn at its next round trip (a heartbeat, or any other statement on
 * that session) and signal the loss on every handle.
 */
class BackendTerminatedTest extends PgLocksTestSupport {
  private final ExecutorService callbackThread = Executors.newSingleThreadExecutor();

  @AfterEach
  void stopCallbackThread() {
    callbackThread.shutdownNow();
  }

  /** Four handles on one lock session: two exclusive locks and two shared handles on one read lock. */
  private final class Held {
    final PgLocks locks;
    final String node = "fail-term-" + UUID.randomUUID().toString().substring(0, 8);
    final List<LockHandle> handles = new ArrayList<>();
    final List<AtomicInteger> callbackCalls = new ArrayList<>();
    final List<List<LossCause>> callbackCauses = new ArrayList<>();
    final List<CompletableFuture<LossCause>> lost = new ArrayList<>();

    Held(Duration lease) {
      locks = track(builder().nodeName(node).lease(lease).callbackExecutor(callbackThread).build());
      add(locks.lock("term-a").tryAcquire().orElseThrow());
      add(locks.lock("term-b").tryAcquire().orElseThrow());
      add(locks.readWriteLock("term-r").readLock().tryAcquire().orElseThrow());
      add(locks.readWriteLock("term-r").readLock().tryAcquire().orElseThrow()); // joins the shared lock
    }

    private void add(LockHandle h) {
      handles.add(h);
      AtomicInteger calls = new AtomicInteger();
      List<LossCause> causes = new ArrayList<>();
      h.onLoss(cause -> {
        synchronized (causes) {
          causes.add(cause);
        }
        calls.incrementAndGet();
      });
      callbackCalls.add(calls);
      callbackCauses.add(causes);
      lost.add(h.lost().toCompletableFuture());
    }

    boolean allLost() {
      return handles.stream().allMatch(h -> h.state() == HandleState.LOST);
    }

    /** Waits until every callback ran and every future completed, then for the callback thread to drain. */
    void awaitSignals() throws Exception {
      await("every onLoss callback and lost() future", Duration.ofSeconds(10),
          () -> callbackCalls.stream().allMatch(c -> c.get() >= 1) && lost.stream().allMatch(f -> f.isDone()));
      callbackThread.submit(() -> { }).get(10, TimeUnit.SECONDS); // anything queued behind has run
    }

    void assertLostWith(LossCause cause) throws Exception {
      for (int i = 0; i < handles.size(); i++) {
        LockHandle h = handles.get(i);
        assertThat(h.state()).as("state of %s", h).isEqualTo(HandleState.LOST);
        assertThat(h.isHeld()).as("isHeld of %s", h).isFalse();
        assertThatThrownBy(h::ensureHeld).isInstanceOf(LockNotHeldException.class)
            .hasMessageContaining("was lost").hasMessageContaining(cause.name());
        assertThat(lost.get(i).get(0, TimeUnit.SECONDS)).isEqualTo(cause);
        assertThat(callbackCalls.get(i).get()).as("onLoss calls of %s", h).isEqualTo(1);
        synchronized (callbackCauses.get(i)) {
          assertThat(callbackCauses.get(i)).containsExactly(cause);
        }
      }
      // A lock taken and closed after the loss (the trigger) is released asynchronously.
      await("nothing held", Duration.ofSeconds(5), () -> locks.heldLocks() == 0);
    }

    /** Closing a lost handle changes nothing; the instance locks again, on a new session. */
    void assertRecovers(Connection admin, int oldPid) throws Exception {
      for (LockHandle h : handles) {
        h.close();
        assertThat(h.state()).isEqualTo(HandleState.LOST);
      }
      CompletableFuture<LossCause> late = new CompletableFuture<>();
      handles.get(0).onLoss(late::complete);
      assertThat(late.get(10, TimeUnit.SECONDS)).isEqualTo(LossCause.CONNECTION_LOST);

      try (LockHandle a = locks.lock("term-a").acquire(Duration.ofSeconds(5));
          LockHandle r = locks.readWriteLock("term-r").readLock().acquire(Duration.ofSeconds(5))) {
        assertThat(a.isHeld()).isTrue();
        assertThat(r.isHeld()).isTrue();
        int newPid = lockSessionPid(admin, node);
        assertThat(newPid).isNotEqualTo(oldPid);
        assertThat(locksOfBackend(admin, newPid)).isEqualTo(2);
        assertThat(serverHolders(admin, locks.key("term-a"))).isEqualTo(1);
      }
    }
  }

  @Test
  void handles_backendTerminated_allLostAtNextHeartbeat_thenLocksAgain() throws Exception {
    Duration lease = Duration.ofSeconds(3);
    Held held = new Held(lease);
    Connection admin = connect();
    int pid = lockSessionPid(admin, held.node);
    assertThat(locksOfBackend(admin, pid)).isEqualTo(3); // the two readers share one server lock

    long terminated = System.nanoTime();
    terminate(admin, pid);
    await("every handle LOST", Duration.ofSeconds(30), held::allLost);
    long detected = System.nanoTime() - terminated;
    held.awaitSignals();

    System.out.println(String.format("pg_terminate_backend: loss detected after %.1f ms (heartbeat every %d ms)",
        detected / 1e6, lease.toMillis() / 3));
    // At the next heartbeat (every third of the lease), not at the lease's end (the cause says so
    // too); the bound leaves two heartbeats of slack for a busy machine.
    assertThat(Duration.ofNanos(detected)).isLessThan(lease);
    held.assertLostWith(LossCause.CONNECTION_LOST);
    held.assertRecovers(admin, pid);
  }

  @Test
  void handles_backendTerminated_allLostByNextStatementOnSession() throws Exception {
    // A long lease: no heartbeat comes in the test's time, so only the next acquire can notice.
    Held held = new Held(Duration.ofMinutes(10));
    Connection admin = connect();
    int pid = lockSessionPid(admin, held.node);
    terminate(admin, pid);
    // The idle session may already have read the server's FATAL message (instant detection, see
    // LossSignalTest); if not, the next statement finds the dead connection.

    String outcome;
    try {
      LockHandle other = held.locks.lock("term-trigger").tryAcquire().orElseThrow();
      outcome = "acquired on " + (lockSessionPid(admin, held.node) == pid ? "the old" : "a new") + " session";
      other.close();
    } catch (LockSessionException e) {
      outcome = "threw " + e;
    }
    System.out.println("pg_terminate_backend, then tryAcquire on the same instance: " + outcome);
    // The statement that met the dead connection marked every handle lost before it returned.
    assertThat(held.handles).allMatch(h -> h.state() == HandleState.LOST);
    held.awaitSignals();
    held.assertLostWith(LossCause.CONNECTION_LOST);
    held.assertRecovers(admin, pid);
  }

  @Test
  void handle_onWaitSession_backendTerminated_lostAtNextHeartbeat() throws Exception {
    // A lock acquired by waiting lives on a wait session ("pglock:<node>:wait-N") until released.
    Duration lease = Duration.ofSeconds(3);
    String node = "fail-termw-" + UUID.randomUUID().toString().substring(0, 8);
    PgLocks other = newLocks();
    PgLocks locks = track(builder().nodeName(node).lease(lease).callbackExecutor(callbackThread).build());
    LockHandle blocker = other.lock("term-w").acquire(Duration.ofSeconds(5));
    CompletableFuture<LockHandle> waiting = CompletableFuture.supplyAsync(() -> {
      try {
        return locks.lock("term-w").acquire(Duration.ofSeconds(30));
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    Connection admin = connect();
    await("a wait session of " + node, Duration.ofSeconds(10), () -> sessionPid(admin, node, "wait") > 0);
    blocker.close();
    LockHandle h = waiting.get(10, TimeUnit.SECONDS);
    CompletableFuture<LossCause> lost = h.lost().toCompletableFuture();
    int pid = sessionPid(admin, node, "wait");
    assertThat(locksOfBackend(admin, pid)).isEqualTo(1);

    long terminated = System.nanoTime();
    terminate(admin, pid);
    assertThat(lost.get(30, TimeUnit.SECONDS)).isEqualTo(LossCause.CONNECTION_LOST);
    long detected = System.nanoTime() - terminated;
    System.out.println(String.format("pg_terminate_backend on a wait session: loss detected after %.1f ms",
        detected / 1e6));
    assertThat(Duration.ofNanos(detected)).isLessThan(lease); // a heartbeat is due every lease/3
    assertThat(h.state()).isEqualTo(HandleState.LOST);
    assertThat(h.isHeld()).isFalse();
    h.close();
    assertThat(locks.heldLocks()).isZero();
    try (LockHandle again = locks.lock("term-w").acquire(Duration.ofSeconds(5))) {
      assertThat(again.isHeld()).isTrue();
      assertThat(serverHolders(admin, locks.key("term-w"))).isEqualTo(1);
    }
  }

  @Test
  void acquire_waitSessionTerminatedWhileWaiting_keepsWaitingAndGetsLock() throws Exception {
    // The wait session holds nothing while it waits: losing it loses no lock, so the wait goes on.
    String node = "fail-termww-" + UUID.randomUUID().toString().substring(0, 8);
    PgLocks other = newLocks();
    PgLocks locks = track(builder().nodeName(node).build());
    LockHandle blocker = other.lock("term-ww").acquire(Duration.ofSeconds(5));
    CompletableFuture<LockHandle> waiting = CompletableFuture.supplyAsync(() -> {
      try {
        return locks.lock("term-ww").acquire(Duration.ofSeconds(30));
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    Connection admin = connect();
    await("a wait session of " + node, Duration.ofSeconds(10), () -> sessionPid(admin, node, "wait") > 0);
    terminate(admin, sessionPid(admin, node, "wait"));
    await("the wait to end, or a new wait session", Duration.ofSeconds(10),
        () -> waiting.isDone() || sessionPid(admin, node, "wait") > 0);
    assertThat(waiting).as("the acquire ended while the lock was still held: %s",
        waiting.isDone() ? waiting.handle((x, e) -> e).join() : "").isNotDone();
    blocker.close();
    try (LockHandle got = waiting.get(10, TimeUnit.SECONDS)) {
      assertThat(got.isHeld()).isTrue();
    }
  }

  /** The pid of the node's session of a role ("lock" or "wait"), or 0 if there is none. */
  private static int sessionPid(Connection admin, String node, String role) {
    try (PreparedStatement ps = admin.prepareStatement("""
        SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND application_name LIKE 'pglock:' || ? || ':' || ? || '-%'""")) {
      ps.setString(1, node);
      ps.setString(2, role);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getInt(1) : 0;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The pid of the instance's one lock session, found by its application_name. */
  private static int lockSessionPid(Connection admin, String node) throws SQLException {
    try (PreparedStatement ps = admin.prepareStatement("""
        SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND application_name LIKE 'pglock:' || ? || ':lock-%'""")) {
      ps.setString(1, node);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("a lock session of node %s", node).isTrue();
        int pid = rs.getInt(1);
        assertThat(rs.next()).as("only one lock session of node %s", node).isFalse();
        return pid;
      }
    }
  }

  private static int locksOfBackend(Connection admin, int pid) throws SQLException {
    try (PreparedStatement ps = admin.prepareStatement(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = ?")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static void terminate(Connection admin, int pid) throws SQLException {
    try (PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(?, 10000)")) {
      ps.setInt(1, pid); // waits (up to 10 s) until the backend is gone and its locks are free
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getBoolean(1)).as("pg_terminate_backend(%d)", pid).isTrue();
      }
    }
    assertThat(locksOfBackend(admin, pid)).isZero();
  }
}
