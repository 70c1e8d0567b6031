package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.process.ChildJvm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A lock held by another JVM whose process is killed or paused: real processes, signals and
 * backends. Timelines use {@link System#nanoTime()} in both JVMs (CLOCK_MONOTONIC on Linux).
 */
class HolderProcessFailureTest extends PgLocksTestSupport {
  /** Generous: a child JVM starts in about a second, slower on a busy machine. */
  private static final Duration CHILD_START = Duration.ofSeconds(60);

  private final List<ChildJvm> children = new ArrayList<>();

  @AfterEach
  void killChildren() {
    for (ChildJvm child : children) {
      child.close();
    }
    children.clear();
  }

  private ChildJvm holder(String name, Duration lease) throws Exception {
    String id = UUID.randomUUID().toString().substring(0, 8);
    ChildJvm child = ChildJvm.start("holder-" + id, "hold", "namespace=test", "node=fail-holder-" + id,
        "name=" + name, "leaseMs=" + lease.toMillis());
    children.add(child);
    return child;
  }

  @Test
  void acquire_holderProcessKilled_grantedWithinOneSecond() throws Exception {
    String name = "sigkill-" + UUID.randomUUID();
    ChildJvm child = holder(name, PgLocksBuilder.DEFAULT_LEASE);
    child.awaitLine("ACQUIRED", CHILD_START);
    PgLocks locks = newLocks();
    assertThat(locks.lock(name).tryAcquire()).as("the child holds the lock").isEmpty();

    long killed = System.nanoTime();
    child.kill();
    LockHandle h = locks.lock(name).acquire(Duration.ofSeconds(5));
    long delay = System.nanoTime() - killed;

    System.out.println(String.format("SIGKILL: granted %.1f ms after the kill", delay / 1e6));
    assertThat(Duration.ofNanos(delay)).isLessThan(Duration.ofSeconds(1));
    assertThat(h.isHeld()).isTrue();
    assertThat(child.awaitExit(Duration.ofSeconds(10))).isEqualTo(137); // 128 + SIGKILL
    h.close();
  }

  @Test
  void lease_holderProcessPaused_holderDeadlinePassesBeforeOtherIsGranted() throws Exception {
    Duration lease = Duration.ofSeconds(2);
    String name = "sigstop-" + UUID.randomUUID();
    ChildJvm child = holder(name, lease);
    child.awaitLine("ACQUIRED", CHILD_START);
    PgLocks locks = newLocks();
    assertThat(locks.lock(name).tryAcquire()).as("the child holds the lock").isEmpty();

    long stopped = System.nanoTime();
    child.signal("STOP");
    LockHandle h = locks.lock(name).acquire(Duration.ofSeconds(30));
    long granted = System.nanoTime();
    long resumed = System.nanoTime();
    child.signal("CONT");
    String[] lost = child.awaitLine("LOST", Duration.ofSeconds(30)).split(" ");
    String cause = lost[1];
    long lostAt = Long.parseLong(lost[2]);
    long deadline = Long.parseLong(lost[4]);

    System.out.println(String.format("SIGSTOP: granted %.1f ms after the stop, holder deadline %.1f ms before "
            + "the grant; holder reported %s %.1f ms after SIGCONT", (granted - stopped) / 1e6,
        (granted - deadline) / 1e6, cause, (lostAt - resumed) / 1e6));
    // The guarantee: the holder's own deadline passed before anyone else was granted the lock.
    assertThat(deadline).as("holder's lease deadline vs the grant (ns)").isLessThan(granted);
    // The lease held the lock while the holder was paused: the server frees it no earlier than the
    // lease after the last statement, and the holder heartbeats every third of the lease.
    assertThat(Duration.ofNanos(granted - stopped)).isGreaterThanOrEqualTo(lease.dividedBy(2));
    // The paused holder learned of the loss when it resumed, promptly, from its lease watchdog.
    assertThat(lostAt).as("loss reported after SIGCONT").isGreaterThan(resumed);
    assertThat(Duration.ofNanos(lostAt - resumed)).isLessThan(Duration.ofSeconds(5));
    assertThat(cause).isEqualTo(LossCause.LEASE_EXPIRED.name());
    assertThat(h.isHeld()).isTrue();
    assertThat(child.awaitExit(Duration.ofSeconds(30))).as(child.output()).isZero();
    h.close();
  }
}
