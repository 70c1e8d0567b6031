package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.fault.TcpProxy;
import io.pglock.internal.TestAccess;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Faults between pglock and PostgreSQL, made with a {@link TcpProxy} the test controls: a silent
 * partition (traffic frozen), and the server going away and coming back. Every public call returns
 * within its own timeout plus the connect timeout, whatever the network does.
 */
class NetworkFaultTest extends PgLocksTestSupport {
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);
  /** Scheduling slack on a busy 2-core machine, on top of the documented bound. */
  private static final long SLACK_MS = 1_500;

  private TcpProxy proxy() throws Exception {
    return proxyToDb();
  }

  private static DataSource through(TcpProxy proxy) {
    return io.pglock.testing.OwnedBackends.recording(through(proxy, "pglock-test-proxied"));
  }

  private PgLocksBuilder proxied(TcpProxy proxy) {
    return PgLocks.builder(through(proxy)).namespace("test").connectTimeout(CONNECT_TIMEOUT);
  }

  /** A name in the namespace "test" whose key maps to the given lock session out of {@code sessions}. */
  private static String nameOnSession(String prefix, int index, int sessions) {
    for (int i = 0; ; i++) {
      String name = prefix + i;
      if (TestAccess.sessionIndex(LockKey.named("test", name), sessions) == index) {
        return name;
      }
    }
  }

  private static long millisSince(long start) {
    return (System.nanoTime() - start) / 1_000_000;
  }

  /**
   * Lets a partition that just began last a moment: pglock sends a batch on the caller's own thread
   * only while its session answered recently (a socket read cannot be abandoned), so the faults
   * these tests model are the ones met after a quiet spell.
   */
  private static void partitionLasts(long frozenAt) {
    await("the partition lasts 200 ms", Duration.ofSeconds(5), () -> millisSince(frozenAt) >= 200);
  }

  /**
   * Item 1: a lock session being opened to a server that does not answer holds no shared lock:
   * close() returns within its bound, and an acquire on another session honours its own timeout.
   */
  @Test
  void close_returnsPromptly_whileASessionOpensToASilentServer() throws Exception {
    TcpProxy proxy = proxy();
    PgLocks locks = proxied(proxy).lockSessions(2).waitSessions(0).build();
    String onFirst = nameOnSession("open-a", 0, 2);
    String onSecond = nameOnSession("open-b", 1, 2);
    proxy.freeze();
    partitionLasts(System.nanoTime());
    Future<Object> opening = inBackground(() -> {
      try {
        return locks.lock(onSecond).tryAcquire(Duration.ofSeconds(30));
      } catch (RuntimeException e) {
        return e;
      }
    });
    long start = System.nanoTime();
    Object other;
    try {
      other = locks.lock(onFirst).tryAcquire(Duration.ofMillis(500));
    } catch (LockSessionException e) {
      other = e;
    }
    assertThat(millisSince(start)).isLessThan(500 + CONNECT_TIMEOUT.toMillis() + SLACK_MS);
    assertThat(other).isInstanceOf(LockSessionException.class);
    start = System.nanoTime();
    locks.close();
    assertThat(millisSince(start)).isLessThan(CONNECT_TIMEOUT.toMillis() + SLACK_MS);
    Object outcome = opening.get(CONNECT_TIMEOUT.toMillis() + SLACK_MS, TimeUnit.MILLISECONDS);
    assertThat(outcome).isInstanceOfAny(LockSessionException.class, PgLocksClosedException.class);
  }

  /** Item 2: with the link silently cut, a timed wait on the server returns within its timeout plus the bound. */
  @Test
  void timedWait_duringPartition_returnsWithinTimeoutPlusBound() throws Exception {
    TcpProxy proxy = proxy();
    PgLocks holder = newLocks();
    PgLocks locks = track(proxied(proxy).build());
    LockHandle held = holder.lock("partition-wait").acquire(Duration.ofSeconds(5));
    Future<Long> waiter = inBackground(() -> {
      long start = System.nanoTime();
      Optional<LockHandle> h = locks.lock("partition-wait").tryAcquire(Duration.ofSeconds(3));
      assertThat(h).isEmpty();
      return millisSince(start);
    });
    await("the waiter blocks on the server", Duration.ofSeconds(10),
        () -> serverWaiters(locks.key("partition-wait")) >= 1);
    proxy.freeze();
    long took = waiter.get(20, TimeUnit.SECONDS);
    assertThat(took).isLessThan(3_000 + CONNECT_TIMEOUT.toMillis() + SLACK_MS);
    held.close();
    proxy.thaw();
  }

  /** Item 2: a try without a timeout returns within the connect timeout when nothing answers. */
  @Test
  void tryAcquire_duringPartition_failsWithinTheBound() throws Exception {
    TcpProxy proxy = proxy();
    PgLocks locks = track(proxied(proxy).build());
    locks.lock("partition-try-warm").tryAcquire().orElseThrow().close();
    proxy.freeze();
    partitionLasts(System.nanoTime());
    long start = System.nanoTime();
    assertThatThrownBy(() -> locks.lock("partition-try").tryAcquire())
        .isInstanceOf(LockSessionException.class)
        .hasMessageContaining("no answer within the connect timeout");
    assertThat(millisSince(start)).isLessThan(CONNECT_TIMEOUT.toMillis() + SLACK_MS);
    proxy.thaw();
  }

  /**
   * Item 7: while a caller holds a session's connection during a stall, the session loop waits
   * properly instead of spinning (it used to burn about 280 ms of CPU per second).
   */
  @Test
  void sessionLoop_doesNotSpin_whileACombiningCallerIsStalled() throws Exception {
    TcpProxy proxy = proxy();
    String node = "spin-" + System.nanoTime() % 100_000;
    PgLocks locks = track(proxied(proxy).nodeName(node).lease(Duration.ofSeconds(6)).build());
    // Kept held, so that no release is in flight: the caller, not the loop, is the one that stalls.
    LockHandle warm = locks.lock("spin-warm").tryAcquire().orElseThrow();
    long lastStatement = System.nanoTime();
    proxy.freeze();
    Future<Object> stalled = inBackground(() -> {
      try {
        return locks.lock("spin").tryAcquire(); // within 50 ms of the last answer: sent by the caller itself
      } catch (RuntimeException e) {
        return e;
      }
    });
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    Thread loop = Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("pglock-" + node + "-lock-0")).findFirst().orElseThrow();
    // Past the heartbeat (a third of the lease, 2 s), the loop wants the connection the caller
    // holds; the lease (less its margin) ends the stall at 5.4 s.
    await("the heartbeat falls due", Duration.ofSeconds(5), () -> millisSince(lastStatement) >= 2_300);
    long cpu0 = mx.getThreadCpuTime(loop.getId());
    long wall0 = System.nanoTime();
    await("a second and a half passes", Duration.ofSeconds(10), () -> millisSince(wall0) >= 1_500);
    long cpuMs = (mx.getThreadCpuTime(loop.getId()) - cpu0) / 1_000_000;
    proxy.thaw();
    stalled.get(20, TimeUnit.SECONDS);
    warm.close();
    assertThat(cpuMs).as("CPU ms the session loop used in 1.5 s of stall").isLessThan(50);
  }

  /**
   * Item 10: a wait with time left rides through the server going away: it reconnects with backoff
   * and keeps waiting, and gets the lock once it is free.
   */
  @Test
  void waitWithoutLimit_ridesThroughAnOutage() throws Exception {
    TcpProxy proxy = proxy();
    PgLocks holder = newLocks();
    PgLocks locks = track(proxied(proxy).build());
    LockHandle held = holder.lock("outage").acquire(Duration.ofSeconds(5));
    Future<LockHandle> waiter = inBackground(() -> locks.lock("outage").acquire());
    LockKey key = locks.key("outage");
    await("the waiter blocks on the server", Duration.ofSeconds(10), () -> serverWaiters(key) >= 1);
    proxy.cut();
    await("the waiter's backends are gone", Duration.ofSeconds(10), () -> serverWaiters(key) == 0);
    // The server is unreachable for a while: refused connects, retried with backoff.
    long down = System.nanoTime();
    await("an outage of a second", Duration.ofSeconds(5), () -> millisSince(down) >= 1_000);
    assertThat(waiter).isNotDone();
    proxy.restore();
    await("the waiter waits on the server again", Duration.ofSeconds(15), () -> serverWaiters(key) >= 1);
    held.close();
    LockHandle got = waiter.get(15, TimeUnit.SECONDS);
    assertThat(got.isHeld()).isTrue();
    got.close();
  }
}
