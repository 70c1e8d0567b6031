package io.pglock.schedule.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.schedule.Schedule;
import io.pglock.schedule.Task;
import io.pglock.schedule.TaskAdmin;
import io.pglock.schedule.TaskRun;
import io.pglock.testing.Await;
import io.pglock.testing.TestDatabase;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The executor on the real database, driven pass by pass from the test's thread. */
class SlotExecutorTest {

  /**
   * This node's estimate of the database's clock is 30 s ahead (as after the server's clock stepped
   * back): the planner decides slots as missed that the database refuses to record. Those slots are
   * not passed (before, the loop moved its last slot past them, and they never got a row); once the
   * clock is measured again, every slot gets its row.
   */
  @Test
  void skipsTheDatabaseRefuses_areNotPassed_andAreDecidedAgain() throws Exception {
    DataSource ds = TestDatabase.get().dataSource();
    PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
    String ns = "exec-" + UUID.randomUUID().toString().substring(0, 8);
    PgLocks locks = PgLocks.builder(ds).namespace(ns).nodeName("x").build();
    SchedulerConnection db = new SchedulerConnection(ds, 10_000);
    RunTable table = new RunTable("pglock");
    DbClock clock = new DbClock();
    AtomicReference<Duration> skew = new AtomicReference<>(Duration.ofSeconds(30));
    ExecutorService runs = Executors.newCachedThreadPool();
    ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor();
    try {
      clock.measure(() -> db.with(table::now).plus(skew.get()));
      SlotExecutor executor = new SlotExecutor(db, table, clock, ns, "x", Duration.ofMillis(100), runs, watchdog,
          Clock.systemUTC(), new ConcurrentLinkedQueue<>(), ConcurrentHashMap.newKeySet(), null, new SlotExecutor.Loop() {
            @Override
            public void measureOffset() throws SQLException {
              skew.set(Duration.ZERO);
              try {
                clock.measure(() -> db.with(table::now).plus(skew.get()));
              } catch (Exception e) {
                throw new SQLException(e);
              }
            }

            @Override
            public boolean closing() {
              return false;
            }

            @Override
            public void wake() {}
          });
      Task task = Task.builder("t", Schedule.fixedRate(Duration.ofSeconds(1))).build(ctx -> { }); // SKIP, lateness 1 s
      db.with(c -> {
        table.register(c, ns, "t", task.schedule().describe(), "x");
        return null;
      });
      TaskState ts = new TaskState(task, locks.lock("task:t").withFencing());
      Instant start = db.with(table::now);
      ts.resolvedUpTo = start;
      ts.decidedUpTo = start;

      executor.process(ts);
      assertThat(ts.resolvedUpTo).as("no slot passed without a row").isEqualTo(start);
      assertThat(ts.decidedUpTo).as("the refused decisions are dropped").isEqualTo(start);
      assertThat(ts.pending).isEmpty();
      assertThat(skew.get()).as("the clock was measured again").isEqualTo(Duration.ZERO);

      Instant target = start.plusSeconds(3);
      Await.until("3 s of slots resolved", Duration.ofSeconds(60), () -> {
        executor.applyEnded();
        try {
          executor.process(ts);
        } catch (SQLException e) {
          throw new IllegalStateException(e);
        }
        return !ts.resolvedUpTo.isBefore(target) && ts.current == null;
      });
      Set<Instant> rows = TaskAdmin.of(ds, "pglock", ns).runs("t", 1000).stream().map(TaskRun::slot)
          .collect(Collectors.toSet());
      for (Instant s = task.schedule().next(start).orElseThrow(); !s.isAfter(ts.resolvedUpTo);
          s = task.schedule().next(s).orElseThrow()) {
        assertThat(rows).as("slot %s has a row", s).contains(s);
      }
    } finally {
      runs.shutdown();
      runs.awaitTermination(30, TimeUnit.SECONDS);
      watchdog.shutdownNow();
      db.close();
      locks.close();
      io.pglock.schedule.SchedulerFixture.deleteRows(ns);
    }
  }

  /**
   * Review of issue 14: a run's span (what it covers as an overlap) is its row's own
   * {@code started_at} and {@code finished_at}, the times other nodes read, as the claim and the
   * finish return them (before, this node's estimate of the clock, taken after each commit).
   */
  @Test
  void aRunsSpan_isItsRowsStartedAtAndFinishedAt() throws Exception {
    DataSource ds = TestDatabase.get().dataSource();
    PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
    String ns = "exec-" + UUID.randomUUID().toString().substring(0, 8);
    PgLocks locks = PgLocks.builder(ds).namespace(ns).nodeName("x").build();
    SchedulerConnection db = new SchedulerConnection(ds, 10_000);
    RunTable table = new RunTable("pglock");
    DbClock clock = new DbClock();
    ExecutorService runs = Executors.newCachedThreadPool();
    ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor();
    ConcurrentLinkedQueue<RunEnded> ended = new ConcurrentLinkedQueue<>();
    try {
      clock.measure(() -> db.with(table::now));
      SlotExecutor executor = new SlotExecutor(db, table, clock, ns, "x", Duration.ofMillis(100), runs, watchdog,
          Clock.systemUTC(), ended, ConcurrentHashMap.newKeySet(), null, new SlotExecutor.Loop() {
            @Override
            public void measureOffset() throws SQLException {
              try {
                clock.measure(() -> db.with(table::now));
              } catch (Exception e) {
                throw new SQLException(e);
              }
            }

            @Override
            public boolean closing() {
              return false;
            }

            @Override
            public void wake() {}
          });
      Task task = Task.builder("t", Schedule.fixedRate(Duration.ofSeconds(1))).build(ctx -> { });
      db.with(c -> {
        table.register(c, ns, "t", task.schedule().describe(), "x");
        return null;
      });
      TaskState ts = new TaskState(task, locks.lock("task:t").withFencing());
      Instant start = db.with(table::now);
      ts.resolvedUpTo = start;
      ts.decidedUpTo = start;
      Await.until("a run started", Duration.ofSeconds(60), () -> {
        try {
          executor.process(ts);
        } catch (SQLException e) {
          throw new IllegalStateException(e);
        }
        return !ts.spans.isEmpty();
      });
      Instant slot = ts.resolvedUpTo;
      Await.until("the run ended", Duration.ofSeconds(60), () -> !ended.isEmpty());
      executor.applyEnded();
      TaskRun row = TaskAdmin.of(ds, "pglock", ns).runs("t", 10).stream().filter(r -> r.slot().equals(slot))
          .findFirst().orElseThrow();
      assertThat(ts.spans).containsExactly(new SlotPlanner.RunSpan(row.startedAt().orElseThrow(),
          row.finishedAt().orElseThrow()));
    } finally {
      runs.shutdown();
      runs.awaitTermination(30, TimeUnit.SECONDS);
      watchdog.shutdownNow();
      db.close();
      locks.close();
      io.pglock.schedule.SchedulerFixture.deleteRows(ns);
    }
  }
}
