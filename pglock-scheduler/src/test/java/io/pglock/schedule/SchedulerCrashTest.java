package io.pglock.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.testing.Await;
import io.pglock.testing.PrivateServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The scheduler on a PostgreSQL server of the test's own, which it crashes ({@code pg_ctl stop -m
 * immediate}) or freezes (SIGSTOP of a backend).
 */
class SchedulerCrashTest {
  private static final Duration WAIT = Duration.ofSeconds(90);
  /**
   * A server that loses what was committed asynchronously in a crash: every commit asynchronous
   * unless a transaction says otherwise, the WAL writer every 10 s (not 200 ms), and no autovacuum
   * (its synchronous commits would flush the WAL).
   */
  private static final String[] LOSSY = {"synchronous_commit=off", "wal_writer_delay=10s", "autovacuum=off"};

  private static PrivateServer privateServer(String... settings) throws Exception {
    try {
      return PrivateServer.start(settings);
    } catch (PrivateServer.Unavailable e) {
      assumeTrue(false, "cannot start a PostgreSQL server of this test's own: " + e.getMessage());
      throw new AssertionError(e);
    }
  }

  private static Optional<String> state(DataSource ds, Instant slot) throws Exception {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
        "SELECT state FROM pglock.task_run WHERE namespace = 'crash' AND task = 'tick' AND slot = ?")) {
      ps.setObject(1, java.time.OffsetDateTime.ofInstant(slot, java.time.ZoneOffset.UTC));
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
      }
    }
  }

  private static long succeededAfter(DataSource ds, Instant slot) throws Exception {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM"
        + " pglock.task_run WHERE namespace = 'crash' AND task = 'tick' AND slot > ? AND state = 'succeeded'")) {
      ps.setObject(1, java.time.OffsetDateTime.ofInstant(slot, java.time.ZoneOffset.UTC));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * Issue 14, section 1: the server runs with {@code synchronous_commit = off} and crashes right
   * after a run row's commit (from inside that slot's run). After the restart the slot has its
   * row (the run row is durable whatever the server says), so it is not run again; before the
   * fix, its row was lost and the slot ran a second time.
   */
  @Test
  void serverWithAsynchronousCommit_crashRightAfterTheRunRow_slotNotRunAgain() throws Exception {
    try (PrivateServer pg = privateServer(LOSSY)) {
      DataSource ds = pg.dataSource("pglock-sched-crash-test");
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
      Map<Instant, AtomicInteger> ranPerSlot = new ConcurrentHashMap<>();
      AtomicBoolean crashNext = new AtomicBoolean();
      AtomicReference<Instant> crashedSlot = new AtomicReference<>();
      CountDownLatch crashed = new CountDownLatch(1);
      AtomicReference<Exception> stopFailure = new AtomicReference<>();
      TaskBody body = ctx -> {
        ranPerSlot.computeIfAbsent(ctx.slot(), k -> new AtomicInteger()).incrementAndGet();
        if (crashNext.compareAndSet(true, false)) {
          crashedSlot.set(ctx.slot());
          // right after this slot's run row committed. On a thread of its own, waited for without
          // interruption: the stop makes the run lose its lock, and the interrupt that follows must
          // not cut the wait for pg_ctl short (on a loaded machine it did, and the latch never fell)
          Thread stopper = new Thread(() -> {
            try {
              pg.stopImmediate();
            } catch (Exception e) {
              stopFailure.set(e);
            } finally {
              crashed.countDown();
            }
          }, "stop-immediate");
          stopper.start();
          boolean interrupted = false;
          while (true) {
            try {
              crashed.await();
              break;
            } catch (InterruptedException e) {
              interrupted = true;
            }
          }
          if (interrupted) {
            Thread.currentThread().interrupt();
          }
        }
      };
      // RUN_EACH with a long missedAfter: a slot without a row after the restart would run again
      Task task = Task.builder("tick", Schedule.fixedRate(Duration.ofSeconds(1))).missedSlots(MissedSlots.RUN_EACH)
          .missedAfter(Duration.ofMinutes(5)).build(body);
      PgLocks locks = PgLocks.builder(ds).namespace("crash").nodeName("first").build();
      Scheduler first = Scheduler.builder(locks).pollInterval(Duration.ofMillis(100))
          .sweepInterval(Duration.ofMillis(200)).closeTimeout(Duration.ofSeconds(5)).build();
      try {
        first.register(task).start();
        Await.until("2 runs", WAIT, () -> ranPerSlot.size() >= 2);
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
          st.execute("CHECKPOINT"); // what ran so far is on disk: only what follows is at stake
        }
        crashNext.set(true);
        assertThat(crashed.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the crash").isTrue();
        assertThat(stopFailure.get()).as("pg_ctl stop -m immediate").isNull();
      } finally {
        first.close();
        locks.close();
      }
      pg.startServer();
      Instant slot = crashedSlot.get();
      Optional<String> afterRestart = state(ds, slot);
      PgLocks locks2 = PgLocks.builder(ds).namespace("crash").nodeName("second").build();
      Scheduler second = Scheduler.builder(locks2).pollInterval(Duration.ofMillis(100))
          .sweepInterval(Duration.ofMillis(200)).closeTimeout(Duration.ofSeconds(5)).build();
      try {
        second.register(Task.builder("tick", Schedule.fixedRate(Duration.ofSeconds(1)))
            .missedSlots(MissedSlots.RUN_EACH).missedAfter(Duration.ofMinutes(5)).build(body)).start();
        Await.until("3 runs after the crashed slot, and its row settled", WAIT, () -> {
          try {
            return succeededAfter(ds, slot) >= 3 && !state(ds, slot).equals(Optional.of("running"));
          } catch (Exception e) {
            return false;
          }
        });
      } finally {
        second.close();
        locks2.close();
      }
      assertThat(ranPerSlot.get(slot).get()).as("runs of the slot whose run row committed before the crash")
          .isEqualTo(1);
      assertThat(afterRestart).as("the crashed slot's run row survived the crash").isPresent();
      assertThat(state(ds, slot)).contains("disconnected");
      assertThat(ranPerSlot.values()).allMatch(n -> n.get() == 1);
    }
  }

  /**
   * Issue 14, section 2: a run whose lock session is frozen (its backend SIGSTOPped, so no round
   * trip succeeds) reads stopRequested() true at the lease deadline by the monotonic clock, even
   * though the loss callbacks cannot run (their executor is blocked); before the fix it read the
   * flag the callback sets, and stayed false.
   */
  @Test
  void runContext_lockSessionFrozen_stopRequestedByTheLeaseDeadline_withoutCallbacks() throws Exception {
    try (PrivateServer pg = privateServer()) {
      DataSource ds = pg.dataSource("pglock-sched-own-test");
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
      CountDownLatch release = new CountDownLatch(1);
      ExecutorService blocked = Executors.newSingleThreadExecutor();
      blocked.execute(() -> {
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      Duration lease = Duration.ofSeconds(2);
      PgLocks locks = PgLocks.builder(ds).namespace("own").nodeName("own-node").lease(lease).callbackExecutor(blocked)
          .build();
      Scheduler s = Scheduler.builder(locks).closeTimeout(Duration.ofSeconds(5)).build();
      CountDownLatch running = new CountDownLatch(1);
      AtomicLong stopSeenAt = new AtomicLong();
      CountDownLatch bodyDone = new CountDownLatch(1);
      int frozenPid = 0;
      try {
        s.register(Task.builder("own", Schedule.fixedDelay(Duration.ofHours(1))).build(ctx -> {
          running.countDown();
          long giveUp = System.nanoTime() + WAIT.toNanos();
          try {
            while (System.nanoTime() - giveUp < 0) {
              if (ctx.stopRequested()) {
                stopSeenAt.set(System.nanoTime());
                return;
              }
              Thread.onSpinWait();
            }
          } finally {
            bodyDone.countDown();
          }
        })).start();
        assertThat(running.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT a.pid FROM"
            + " pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted"
            + " AND a.application_name LIKE 'pglock:own-node:%'"); ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).as("the lock session's backend").isTrue();
          frozenPid = rs.getInt(1);
        }
        long frozenAt = System.nanoTime();
        signal("STOP", frozenPid);
        assertThat(bodyDone.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the body saw stopRequested()").isTrue();
        assertThat(stopSeenAt.get()).as("stopRequested() turned true").isNotZero();
        Duration after = Duration.ofNanos(stopSeenAt.get() - frozenAt);
        // the lease runs from the last round trip that succeeded, which began before the freeze; a
        // margin for the spinning body's thread to be scheduled on a loaded machine
        assertThat(after).as("from the freeze to stopRequested()").isLessThanOrEqualTo(lease.plusMillis(500));
      } finally {
        if (frozenPid != 0) {
          signal("CONT", frozenPid);
        }
        release.countDown();
        s.close();
        locks.close();
        blocked.shutdownNow();
      }
    }
  }

  private static void signal(String signal, int pid) throws Exception {
    Process p = new ProcessBuilder("kill", "-" + signal, Integer.toString(pid)).redirectErrorStream(true).start();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("kill -%s %s: %s", signal, pid, new String(p.getInputStream().readAllBytes()))
        .isZero();
  }
}
