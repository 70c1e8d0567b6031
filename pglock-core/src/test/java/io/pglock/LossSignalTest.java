package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.internal.TestAccess;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * How a holder learns of a loss: at once when the server says so, by every accessor alike, by both
 * clocks, and on a thread that is not pglock's session or watchdog thread.
 */
class LossSignalTest extends PgLocksTestSupport {

  private static String node(String prefix) {
    return prefix + "-" + System.nanoTime() % 1_000_000;
  }

  /** The backend pids of a node's lock sessions, by application_name. */
  private List<Integer> lockSessionPids(String node) throws Exception {
    List<Integer> pids = new ArrayList<>();
    try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("""
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

  private void terminate(int pid) throws Exception {
    try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
      ps.setInt(1, pid);
      ps.execute();
    }
  }

  /**
   * Instant loss detection: an idle lock session learns of pg_terminate_backend from the server's
   * FATAL message within a probe interval, not at its next heartbeat (10 s at the default lease).
   */
  @Test
  void idleSession_notices_terminateBackend_withinAFewProbeIntervals() throws Exception {
    String node = node("instant");
    PgLocks locks = track(builder().nodeName(node).build());
    LockHandle h = locks.lock("instant").tryAcquire().orElseThrow();
    CompletableFuture<LossCause> lost = h.lost().toCompletableFuture();
    int pid = lockSessionPids(node).get(0);
    long start = System.nanoTime();
    terminate(pid);
    assertThat(lost.get(2, TimeUnit.SECONDS)).isEqualTo(LossCause.CONNECTION_LOST);
    assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(1_000);
    assertThat(h.state()).isEqualTo(HandleState.LOST);
  }

  /** The namespace is in application_name, so two instances on one node show apart. */
  @Test
  void applicationName_carriesTheNamespace() throws Exception {
    String node = node("names");
    PgLocks billing = track(PgLocks.builder(db().dataSource()).namespace("billing").nodeName(node).build());
    PgLocks shipping = track(PgLocks.builder(db().dataSource()).namespace("shipping").nodeName(node).build());
    List<String> names = new ArrayList<>();
    try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("""
        SELECT application_name FROM pg_stat_activity
         WHERE datname = current_database() AND application_name LIKE 'pglock:' || ? || ':%' ORDER BY 1""")) {
      ps.setString(1, node);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          names.add(rs.getString(1));
        }
      }
    }
    assertThat(names).containsExactly("pglock:" + node + ":lock-0:billing", "pglock:" + node + ":lock-0:shipping");
    assertThat(billing.openSessions() + shipping.openSessions()).isEqualTo(2);
  }

  /**
   * Items 8 and 9: after a suspend (the wall clock moved on, the monotonic clock did not), the
   * lease has run out by the wall clock: isHeld() is false and state() is LOST, at once.
   */
  @Test
  void afterASuspend_theLeaseHasRunOut_byEveryAccessor() throws Exception {
    TestAccess.JumpingClock clock = new TestAccess.JumpingClock();
    PgLocks locks = track(TestAccess.start(builder().lease(Duration.ofSeconds(30)), clock));
    LockHandle h = locks.lock("suspend").tryAcquire().orElseThrow();
    assertThat(h.isHeld()).isTrue();
    clock.suspendFor(Duration.ofSeconds(31));
    assertThat(h.isHeld()).isFalse();
    assertThat(h.state()).isEqualTo(HandleState.LOST);
    h.close();
  }

  /** Item 9: a step of the monotonic clock alone past the lease also ends it (either clock is enough). */
  @Test
  void monotonicClockPastTheLease_endsItToo() throws Exception {
    TestAccess.JumpingClock clock = new TestAccess.JumpingClock();
    PgLocks locks = track(TestAccess.start(builder().lease(Duration.ofSeconds(30)), clock));
    LockHandle h = locks.lock("monotonic").tryAcquire().orElseThrow();
    clock.advanceMonotonic(Duration.ofSeconds(28));
    assertThat(h.isHeld()).isFalse();
    assertThat(h.state()).isEqualTo(HandleState.LOST);
    h.close();
  }

  /**
   * Item 6: a callback executor that refuses work never makes a callback run on pglock's session
   * or watchdog thread: it runs on pglock's fallback callback thread.
   */
  @Test
  void refusingCallbackExecutor_callbacksRunOnTheFallbackThread() throws Exception {
    String node = node("refuse");
    ExecutorService refusing = Executors.newSingleThreadExecutor();
    refusing.shutdown();
    PgLocks locks = track(builder().nodeName(node).callbackExecutor(refusing).build());
    LockHandle h = locks.lock("refused").tryAcquire().orElseThrow();
    AtomicReference<String> ranOn = new AtomicReference<>();
    CompletableFuture<Void> ran = new CompletableFuture<>();
    h.onLoss(cause -> {
      ranOn.set(Thread.currentThread().getName());
      ran.complete(null);
    });
    terminate(lockSessionPids(node).get(0));
    ran.get(15, TimeUnit.SECONDS);
    assertThat(ranOn.get()).isEqualTo("pglock-" + node + "-callbacks-fallback");
  }

  /** Item 5: an interrupt racing the death of a wait session ends the wait; it is never swallowed. */
  @Test
  void interruptRacingWaitSessionDeath_endsTheWait() throws Exception {
    PgLocks holder = newLocks();
    LockHandle held = holder.lock("interrupt-death").tryAcquire().orElseThrow();
    for (int i = 0; i < 10; i++) {
      String node = node("death");
      PgLocks locks = builder().nodeName(node).build();
      try {
        AtomicReference<Thread> waiter = new AtomicReference<>();
        Future<String> f = inBackground(() -> {
          waiter.set(Thread.currentThread());
          try {
            locks.lock("interrupt-death").acquire();
            return "acquired";
          } catch (InterruptedException e) {
            return "interrupted";
          }
        });
        LockKey key = locks.key("interrupt-death");
        await("the waiter blocks on the server", Duration.ofSeconds(10), () -> serverWaiters(key) >= 1);
        int waitPid;
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("""
            SELECT pid FROM pg_stat_activity WHERE datname = current_database()
               AND application_name LIKE 'pglock:' || ? || ':wait-%'""")) {
          ps.setString(1, node);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            waitPid = rs.getInt(1);
          }
        }
        terminate(waitPid);
        waiter.get().interrupt();
        assertThat(f.get(10, TimeUnit.SECONDS)).as("round %d", i).isEqualTo("interrupted");
      } finally {
        locks.close();
      }
    }
    held.close();
  }
}
