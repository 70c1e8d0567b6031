package io.pglock.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.SchemaMissingException;
import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 14's scheduler defects on the real database, one test each: the policies do what
 * docs/scheduling.md says. Every test has a namespace of its own.
 */
@ExtendWith(NoLeakedLocks.class)
class SchedulerPoliciesTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private final String namespace = "pol-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<AutoCloseable> open = new ArrayList<>();

  @BeforeAll
  static void schema() {
    SchedulerFixture.schema();
  }

  @AfterEach
  void closeAll() throws Exception {
    SchedulerFixture.closeAndDelete(open, namespace);
  }

  private Scheduler node(String name) {
    PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).namespace(namespace).nodeName(name).build();
    open.add(locks);
    Scheduler s = Scheduler.builder(locks).pollInterval(Duration.ofMillis(100)).sweepInterval(Duration.ofMillis(200))
        .closeTimeout(Duration.ofSeconds(10)).build();
    open.add(s);
    return s;
  }

  private List<TaskRun> runs(String task) {
    return TaskAdmin.of(TestDatabase.get().dataSource(), "pglock", namespace).runs(task, 10_000);
  }

  private static Instant dbNow() throws Exception {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT clock_timestamp()"); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getTimestamp(1).toInstant();
    }
  }

  /** A history as a previous life of the fleet left it: the task, and its latest run at {@code slot}. */
  private void history(String task, String schedule, Instant slot) throws Exception {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement t = c.prepareStatement("INSERT INTO pglock.scheduled_task (namespace, name, schedule,"
            + " updated_by) VALUES (?, ?, ?, 'earlier')");
        PreparedStatement r = c.prepareStatement("INSERT INTO pglock.task_run (namespace, task, slot, kind, state,"
            + " attempt, node, fencing_token, started_at, finished_at) VALUES (?, ?, ?, 'scheduled', 'succeeded', 1,"
            + " 'earlier', 1, ?, ?)")) {
      t.setString(1, namespace);
      t.setString(2, task);
      t.setString(3, schedule);
      t.execute();
      r.setString(1, namespace);
      r.setString(2, task);
      r.setTimestamp(3, Timestamp.from(slot));
      r.setTimestamp(4, Timestamp.from(slot));
      r.setTimestamp(5, Timestamp.from(slot));
      r.execute();
    }
  }

  private static Map<Instant, TaskRun> bySlot(List<TaskRun> runs) {
    Map<Instant, TaskRun> m = new ConcurrentHashMap<>();
    runs.forEach(r -> m.put(r.slot(), r));
    return m;
  }

  /**
   * Overlap.QUEUE (1 s rate, missedAfter 1 s, a 5 s first run): the slots that come during the run
   * all run after it; before the fix, 3 of 4 were recorded as skipped (missed).
   */
  @Test
  void queue_slotsDuringALongRun_allRunAfterIt() {
    AtomicInteger calls = new AtomicInteger();
    Scheduler a = node("a");
    a.register(Task.builder("q", Schedule.fixedRate(Duration.ofSeconds(1))).overlap(Overlap.QUEUE)
        .missedAfter(Duration.ofSeconds(1)).build(ctx -> {
          if (calls.incrementAndGet() == 1) {
            TimeUnit.SECONDS.sleep(5); // the long run
          }
        })).start();
    Await.until("the long run and the slots queued behind it", WAIT, () -> {
      List<TaskRun> rs = runs("q");
      return rs.size() >= 8 && rs.get(rs.size() - 1).state() == RunState.SUCCEEDED
          && rs.stream().filter(r -> r.state() == RunState.SUCCEEDED).count() >= 7;
    });
    a.close();
    List<TaskRun> all = runs("q");
    TaskRun first = all.get(all.size() - 1);
    Map<Instant, TaskRun> rows = bySlot(all);
    for (int i = 1; i <= 4; i++) {
      TaskRun r = rows.get(first.slot().plusSeconds(i));
      assertThat(r).as("slot +" + i + " s, during the 5 s run").isNotNull();
      assertThat(r.state()).as("slot +" + i + " s: " + r.detail()).isEqualTo(RunState.SUCCEEDED);
      assertThat(r.kind()).isEqualTo(RunKind.SCHEDULED);
    }
    assertThat(all).noneMatch(r -> r.state() == RunState.SKIPPED);
  }

  /**
   * A trigger() that waits behind a run, Overlap.SKIP, RUN_EACH: the slots during the run are
   * recorded as overlaps; before the fix they were planned after the run and ran as catch-ups.
   */
  @Test
  void triggerBehindARun_slotsDuringTheRun_areOverlaps_notCatchUps() throws Exception {
    CountDownLatch longRunGoes = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    Scheduler a = node("a");
    a.register(Task.builder("t", Schedule.fixedRate(Duration.ofSeconds(1))).overlap(Overlap.SKIP)
        .missedSlots(MissedSlots.RUN_EACH).missedAfter(Duration.ofSeconds(1)).build(ctx -> {
          if (ctx.kind() != RunKind.MANUAL && calls.incrementAndGet() == 1) {
            longRunGoes.countDown();
            TimeUnit.SECONDS.sleep(4);
          }
        })).start();
    assertThat(longRunGoes.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    a.trigger("t");
    Await.until("the manual run and 2 scheduled runs after it", WAIT, () -> {
      List<TaskRun> rs = runs("t");
      return rs.stream().anyMatch(r -> r.kind() == RunKind.MANUAL && r.state() == RunState.SUCCEEDED)
          && rs.stream().filter(r -> r.kind() != RunKind.MANUAL && r.state() == RunState.SUCCEEDED).count() >= 3;
    });
    a.close();
    List<TaskRun> all = runs("t");
    assertThat(all).as("no catch-up run: SKIP forbids runs of the slots during a run").noneMatch(
        r -> r.kind() == RunKind.CATCH_UP);
    List<TaskRun> skipped = all.stream().filter(r -> r.state() == RunState.SKIPPED).toList();
    assertThat(skipped).as("the slots during the 4 s run").hasSizeGreaterThanOrEqualTo(3);
    assertThat(skipped).allSatisfy(r -> assertThat(r.detail().orElse("")).startsWith("overlap"));
  }

  /**
   * RUN_ONCE after 25 s in which no node ran (the history's latest slot 25 s ago): one catch-up
   * run, though an on-time slot falls due in the same pass; before the fix, none.
   */
  @Test
  void runOnce_afterAnOutage_oneCatchUpRun() throws Exception {
    Instant last = dbNow().truncatedTo(ChronoUnit.SECONDS).minusSeconds(25);
    history("once", "every 1s", last);
    Scheduler a = node("a");
    a.register(Task.builder("once", Schedule.fixedRate(Duration.ofSeconds(1))).missedSlots(MissedSlots.RUN_ONCE)
        .missedAfter(Duration.ofSeconds(1)).build(ctx -> { })).start();
    Await.until("the outage's slots decided and 2 on-time runs", WAIT, () -> runs("once").stream()
        .filter(r -> r.kind() == RunKind.SCHEDULED && r.state() == RunState.SUCCEEDED
            && r.slot().isAfter(last.plusSeconds(25))).count() >= 2);
    a.close();
    List<TaskRun> all = runs("once");
    List<TaskRun> catchUps = all.stream().filter(r -> r.kind() == RunKind.CATCH_UP).toList();
    assertThat(catchUps).as("RUN_ONCE: one catch-up run").hasSize(1);
    assertThat(catchUps.get(0).state()).isEqualTo(RunState.SUCCEEDED);
    assertThat(all.stream().filter(r -> r.state() == RunState.SKIPPED).count()).isGreaterThanOrEqualTo(20);
  }

  /**
   * A restart with the defaults (SKIP, missedAfter unset) of a per-second task down 8 s: at most
   * one slot dated before start() runs; before the fix, a burst of every slot of the last 10 s.
   */
  @Test
  void restartWithDefaults_perSecondTask_noBurstOfSlotsFromBeforeStart() throws Exception {
    Instant last = dbNow().truncatedTo(ChronoUnit.SECONDS).minusSeconds(8);
    history("tick", "every 1s", last);
    Scheduler a = node("a");
    a.register(Task.builder("tick", Schedule.fixedRate(Duration.ofSeconds(1))).build(ctx -> { }));
    Instant started = dbNow();
    a.start();
    Await.until("2 runs of slots after start()", WAIT, () -> runs("tick").stream()
        .filter(r -> r.state() == RunState.SUCCEEDED && r.slot().isAfter(started)).count() >= 2);
    a.close();
    List<TaskRun> before = runs("tick").stream().filter(r -> r.state() == RunState.SUCCEEDED
        && r.slot().isAfter(last) && r.slot().isBefore(started)).toList();
    assertThat(before).as("runs of slots dated before start()").hasSizeLessThanOrEqualTo(1);
    assertThat(runs("tick").stream().filter(r -> r.state() == RunState.SKIPPED).count())
        .as("the seconds it was down are recorded as skipped").isGreaterThanOrEqualTo(6);
  }

  /** Without the task tables, register() and start() name version 8, where it was checked, and the fix. */
  @Test
  void noSchema_messageNamesVersion8_andTheFix() {
    PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).namespace(namespace).nodeName("n")
        .schema("no_such_schema_" + namespace.substring(4)).build();
    open.add(locks);
    Scheduler s = Scheduler.builder(locks).build();
    open.add(s);
    Task task = Task.builder("x", Schedule.fixedRate(Duration.ofSeconds(1))).build(ctx -> { });
    for (Runnable call : List.<Runnable>of(() -> s.register(task), s::start)) {
      assertThatThrownBy(call::run).isInstanceOf(SchemaMissingException.class)
          .hasMessageContaining("version 8").hasMessageContaining("checked by Scheduler.register and Scheduler.start")
          .hasMessageContaining("PgLockSchema.migrate(dataSource, \"no_such_schema_")
          .hasMessageNotContaining("version 5").hasMessageNotContaining("checked at build");
    }
  }
}
