package io.pglock.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.PgLocks;
import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Schedulers of several in-JVM nodes (each with a {@code PgLocks} of its own) on the real
 * database. Every test has a namespace of its own, so tasks and rows do not meet.
 */
@ExtendWith(NoLeakedLocks.class)
class SchedulerTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private final String namespace = "sched-" + UUID.randomUUID().toString().substring(0, 8);
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
    return node(name, Clock.systemUTC());
  }

  private Scheduler node(String name, Clock clock) {
    PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).namespace(namespace).nodeName(name).build();
    open.add(locks);
    Scheduler s = Scheduler.builder(locks).pollInterval(Duration.ofMillis(100)).sweepInterval(Duration.ofMillis(200))
        .clock(clock).closeTimeout(Duration.ofSeconds(5)).build();
    open.add(s);
    return s;
  }

  private List<TaskRun> runs(String task) {
    return TaskAdmin.of(TestDatabase.get().dataSource(), "pglock", namespace).runs(task, 10_000);
  }

  private static List<TaskRun> inState(List<TaskRun> runs, RunState state) {
    return runs.stream().filter(r -> r.state() == state).toList();
  }

  /** Runs each slot once across two nodes whose clocks are 5 s off either way; never before its time. */
  @Test
  void everySecond_twoNodesWithSkewedClocks_eachSlotOnce_neverEarly() {
    Map<Instant, AtomicInteger> ranPerSlot = new ConcurrentHashMap<>();
    List<String> early = new CopyOnWriteArrayList<>();
    TaskBody body = ctx -> {
      ranPerSlot.computeIfAbsent(ctx.slot(), k -> new AtomicInteger()).incrementAndGet();
      if (Instant.now().isBefore(ctx.slot())) {
        early.add(ctx.slot() + " started at " + Instant.now());
      }
    };
    Task task = Task.builder("tick", Schedule.fixedRate(Duration.ofSeconds(1))).build(body);
    Scheduler ahead = node("ahead", Clock.offset(Clock.systemUTC(), Duration.ofSeconds(5)));
    Scheduler behind = node("behind", Clock.offset(Clock.systemUTC(), Duration.ofSeconds(-5)));
    ahead.register(task).start();
    behind.register(Task.builder("tick", Schedule.fixedRate(Duration.ofSeconds(1))).build(body)).start();
    Await.until("6 slots run", WAIT, () -> inState(runs("tick"), RunState.SUCCEEDED).size() >= 6);
    ahead.close();
    behind.close();

    List<TaskRun> all = runs("tick");
    assertThat(ranPerSlot.values()).allMatch(n -> n.get() == 1);
    assertThat(early).isEmpty();
    assertThat(all).allMatch(r -> r.state() == RunState.SUCCEEDED && r.kind() == RunKind.SCHEDULED);
    for (TaskRun r : all) {
      assertThat(r.startedAt().orElseThrow()).as("started by the database's clock").isAfterOrEqualTo(r.slot());
    }
    // Consecutive slots, none missing between the first and the last.
    for (int i = 1; i < all.size(); i++) {
      assertThat(Duration.between(all.get(i).slot(), all.get(i - 1).slot())).isEqualTo(Duration.ofSeconds(1));
    }
  }

  /** A fixed delay on two nodes registered apart: one first slot for both, then each slot after the last end. */
  @Test
  void fixedDelay_twoNodesRegisteredApart_oneChainOfSlots() throws Exception {
    Map<Instant, AtomicInteger> ranPerSlot = new ConcurrentHashMap<>();
    TaskBody body = ctx -> {
      ranPerSlot.computeIfAbsent(ctx.slot(), k -> new AtomicInteger()).incrementAndGet();
      TimeUnit.MILLISECONDS.sleep(200); // the work
    };
    Scheduler a = node("a");
    a.register(Task.builder("delayed", Schedule.fixedDelay(Duration.ofSeconds(1))).build(body));
    TimeUnit.MILLISECONDS.sleep(300); // the second node registers a moment later: its own clock reading would differ
    Scheduler b = node("b");
    b.register(Task.builder("delayed", Schedule.fixedDelay(Duration.ofSeconds(1))).build(body));
    a.start();
    b.start();
    Await.until("4 runs", WAIT, () -> inState(runs("delayed"), RunState.SUCCEEDED).size() >= 4);
    a.close();
    b.close();
    List<TaskRun> all = runs("delayed");
    assertThat(ranPerSlot.values()).allMatch(n -> n.get() == 1);
    assertThat(all).allMatch(r -> r.state() == RunState.SUCCEEDED);
    for (int i = 1; i < all.size(); i++) { // newest first: each slot is the previous run's end + 1 s
      TaskRun previous = all.get(i);
      assertThat(all.get(i - 1).slot()).isEqualTo(previous.finishedAt().orElseThrow().plusSeconds(1));
    }
  }

  /**
   * A per-second cron task registered by two nodes before either ran it: one run per whole second.
   * (Each node starts from its registration's instant; cron slots that kept that instant's fraction
   * of a second made two series a few ms apart, and every second ran twice.)
   */
  @Test
  void cronEverySecond_twoNodesRegisteredApart_oneRunPerWholeSecond() {
    List<Instant> slots = new CopyOnWriteArrayList<>();
    Scheduler a = node("a");
    Scheduler b = node("b");
    a.register(Task.builder("cron-tick", Schedule.cron("* * * * * *")).build(ctx -> slots.add(ctx.slot())));
    b.register(Task.builder("cron-tick", Schedule.cron("* * * * * *")).build(ctx -> slots.add(ctx.slot())));
    a.start();
    b.start();
    Await.until("6 runs", WAIT, () -> slots.size() >= 6);
    a.close();
    b.close();

    assertThat(slots).allMatch(s -> s.getNano() == 0, "a whole second");
    assertThat(slots.stream().map(Instant::getEpochSecond).distinct().count()).as("runs per second: %s", slots)
        .isEqualTo(slots.size());
  }

  @Test
  void failingTask_recordsItsError_deadline_interrupts() {
    Scheduler s = node("a");
    s.register(Task.builder("fails", Schedule.fixedRate(Duration.ofSeconds(1))).build(ctx -> {
      throw new IllegalStateException("report source unavailable");
    }));
    s.register(Task.builder("slow", Schedule.fixedRate(Duration.ofSeconds(1))).deadline(Duration.ofMillis(200))
        .build(ctx -> TimeUnit.SECONDS.sleep(30))); // the work that overruns
    s.start();
    Await.until("a failure and an interruption", WAIT, () -> !inState(runs("fails"), RunState.FAILED).isEmpty()
        && !inState(runs("slow"), RunState.INTERRUPTED).isEmpty());
    TaskRun failed = inState(runs("fails"), RunState.FAILED).get(0);
    assertThat(failed.errorClass()).contains(IllegalStateException.class.getName());
    assertThat(failed.errorMessage()).contains("report source unavailable");
    assertThat(failed.errorStack().orElseThrow()).contains("at io.pglock.schedule.SchedulerTest");
    TaskRun interrupted = inState(runs("slow"), RunState.INTERRUPTED).get(0);
    assertThat(interrupted.detail().orElseThrow()).contains("deadline of PT0.2S passed");
    assertThat(Duration.between(interrupted.startedAt().orElseThrow(), interrupted.finishedAt().orElseThrow()))
        .isLessThan(Duration.ofSeconds(5));
  }

  @Test
  void trigger_runsOnceOnOneNode_pauseStopsSlots_resumeSkipsWhatPassed() {
    Scheduler a = node("a");
    Scheduler b = node("b");
    AtomicInteger manual = new AtomicInteger();
    TaskBody body = ctx -> {
      if (ctx.kind() == RunKind.MANUAL) {
        manual.incrementAndGet();
      }
    };
    // Never by schedule before 2099.
    a.register(Task.builder("rare", Schedule.cron("0 0 0 1 1 *")).build(body)).start();
    b.register(Task.builder("rare", Schedule.cron("0 0 0 1 1 *")).build(body)).start();
    a.trigger("rare");
    Await.until("the manual run", WAIT, () -> inState(runs("rare"), RunState.SUCCEEDED).size() == 1);
    assertThat(runs("rare").get(0).kind()).isEqualTo(RunKind.MANUAL);
    assertThat(manual.get()).isEqualTo(1);
    assertThatThrownBy(() -> a.trigger("nope")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no task \"nope\"");

    AtomicInteger ticks = new AtomicInteger();
    a.register(Task.builder("tick", Schedule.fixedRate(Duration.ofSeconds(1))).missedAfter(Duration.ofSeconds(1))
        .build(ctx -> ticks.incrementAndGet()));
    Await.until("a tick", WAIT, () -> ticks.get() > 0);
    b.pause("tick"); // from the other node: the flag reaches every node
    Await.until("paused seen", WAIT, () -> TaskAdmin.of(TestDatabase.get().dataSource(), "pglock", namespace)
        .tasks(0).stream().anyMatch(t -> t.name().equals("tick") && t.paused()));
    int atPause = ticks.get();
    Instant pausedAt = Instant.now();
    Await.until("3 s pass", WAIT, () -> Duration.between(pausedAt, Instant.now()).toSeconds() >= 3);
    assertThat(ticks.get()).as("at most one run that had started as the pause came").isLessThanOrEqualTo(atPause + 1);
    a.resume("tick");
    Await.until("ticks again", WAIT, () -> ticks.get() > atPause + 2);
    assertThat(inState(runs("tick"), RunState.SKIPPED)).as("the slots that passed while paused").isNotEmpty()
        .allMatch(r -> r.detail().orElseThrow().startsWith("missed"));
  }

  @Test
  void gapInTheHistory_runEach_catchesUpTheMostRecent_runOnce_one_skip_none() throws Exception {
    Instant now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    for (String task : List.of("each", "once", "skip")) {
      insertRun(task, now.minusSeconds(30)); // the fleet was down for 30 s after this run
    }
    Scheduler s = node("a");
    s.register(Task.builder("each", Schedule.fixedRate(Duration.ofSeconds(1))).missedSlots(MissedSlots.RUN_EACH)
        .catchUpLimit(5).build(ctx -> { }));
    s.register(Task.builder("once", Schedule.fixedRate(Duration.ofSeconds(1))).missedSlots(MissedSlots.RUN_ONCE)
        .build(ctx -> { }));
    s.register(Task.builder("skip", Schedule.fixedRate(Duration.ofSeconds(1))).build(ctx -> { }));
    s.start();
    Await.until("caught up", WAIT, () -> runs("each").stream().filter(r -> r.kind() == RunKind.CATCH_UP
        && r.state() == RunState.SUCCEEDED).count() == 5 && !inState(runs("skip"), RunState.SUCCEEDED).isEmpty()
        && runs("once").stream().anyMatch(r -> r.kind() == RunKind.CATCH_UP || r.state() == RunState.SUCCEEDED));
    assertThat(runs("once").stream().filter(r -> r.kind() == RunKind.CATCH_UP).count())
        .as("RUN_ONCE: at most the one catch-up (none if an on-time slot came first)").isLessThanOrEqualTo(1);
    assertThat(inState(runs("once"), RunState.SKIPPED)).hasSizeGreaterThanOrEqualTo(15);
    assertThat(runs("skip").stream().filter(r -> r.kind() == RunKind.CATCH_UP)).isEmpty();
    assertThat(inState(runs("skip"), RunState.SKIPPED)).hasSizeGreaterThanOrEqualTo(15);
    assertThat(inState(runs("each"), RunState.SKIPPED)).hasSizeGreaterThanOrEqualTo(10);
  }

  @Test
  void overlap_skipRecordsTheSlot_queueRunsItAfter_neverTwoAtOnce() {
    Scheduler s = node("a");
    Map<String, AtomicInteger> inside = new ConcurrentHashMap<>();
    AtomicInteger maxInside = new AtomicInteger();
    TaskBody slow = ctx -> {
      AtomicInteger mine = inside.computeIfAbsent(ctx.task(), k -> new AtomicInteger());
      maxInside.accumulateAndGet(mine.incrementAndGet(), Math::max);
      try {
        TimeUnit.MILLISECONDS.sleep(2500); // the work that outlasts its period
      } finally {
        mine.decrementAndGet();
      }
    };
    s.register(Task.builder("skipping", Schedule.fixedRate(Duration.ofSeconds(1))).build(slow));
    s.register(Task.builder("queueing", Schedule.fixedRate(Duration.ofSeconds(1))).overlap(Overlap.QUEUE)
        .missedAfter(Duration.ofMinutes(1)).build(slow));
    s.start();
    Await.until("two runs of each", WAIT, () -> inState(runs("skipping"), RunState.SUCCEEDED).size() >= 2
        && inState(runs("queueing"), RunState.SUCCEEDED).size() >= 2);
    assertThat(inState(runs("skipping"), RunState.SKIPPED)).isNotEmpty()
        .allMatch(r -> r.detail().orElseThrow().startsWith("overlap"));
    assertThat(inState(runs("queueing"), RunState.SKIPPED)).isEmpty();
    List<TaskRun> queued = inState(runs("queueing"), RunState.SUCCEEDED);
    TaskRun late = queued.get(0);
    assertThat(Duration.between(late.slot(), late.startedAt().orElseThrow())).as("queued: started after its slot")
        .isGreaterThan(Duration.ofMillis(500));
    assertThat(maxInside.get()).as("runs of one task at once").isEqualTo(1);
  }

  /**
   * Slots that fell due together (the node's loop started 2.5 s after the task was registered, as
   * after an outage) each run, one after the other: the first one's run started after the others'
   * time, so they did not come while it went, and Overlap.SKIP (the default) does not apply.
   */
  @Test
  void slotsDueTogether_runOneAfterTheOther_notSkippedAsOverlap() {
    Scheduler s = node("a");
    // missedAfter set: by default a slot whose successor has come is missed, and these are 2.5 s old
    s.register(Task.builder("late", Schedule.fixedRate(Duration.ofSeconds(1))).missedAfter(Duration.ofSeconds(10))
        .build(ctx ->
        TimeUnit.MILLISECONDS.sleep(300))); // the work, longer than the claim of the next slot takes
    Instant registered = Instant.now();
    Await.until("two slots to pass unclaimed", WAIT, () -> Instant.now().isAfter(registered.plusMillis(2500)));
    s.start();
    Await.until("the slots due at the start run", WAIT, () -> inState(runs("late"), RunState.SUCCEEDED).size() >= 3);
    s.close();
    List<TaskRun> all = runs("late");
    Instant firstStart = all.get(all.size() - 1).startedAt().orElseThrow(); // newest first
    List<TaskRun> dueTogether = all.stream().filter(r -> !r.slot().isAfter(firstStart)).toList();
    assertThat(dueTogether).as("due when the loop started: %s", all).hasSizeGreaterThanOrEqualTo(2)
        .allMatch(r -> r.state() == RunState.SUCCEEDED);
    // a later slot may still come while a queued run goes: only then is it an overlap
    for (TaskRun skipped : inState(all, RunState.SKIPPED)) {
      assertThat(all).as("a run going when %s came", skipped.slot()).anyMatch(r -> r.state() == RunState.SUCCEEDED
          && r.startedAt().orElseThrow().isBefore(skipped.slot()) && r.finishedAt().orElseThrow().isAfter(skipped.slot()));
    }
  }

  @Test
  void runningRowWithNobodyHoldingTheLock_isMarkedDisconnected_orRetried() throws Exception {
    Instant old = Instant.now().minusSeconds(3).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    insertRunning("gone", old, "crashed-node");
    insertRunning("retried", old, "crashed-node");
    Scheduler s = node("a");
    CountDownLatch retried = new CountDownLatch(1);
    s.register(Task.builder("gone", Schedule.cron("0 0 0 1 1 *")).build(ctx -> { }));
    s.register(Task.builder("retried", Schedule.cron("0 0 0 1 1 *")).retryDisconnected(2).build(ctx -> {
      assertThat(ctx.attempt()).isEqualTo(2);
      assertThat(ctx.slot()).isEqualTo(old);
      retried.countDown();
    }));
    s.start();
    Await.until("the sweep", WAIT, () -> runs("gone").get(0).state() == RunState.DISCONNECTED
        && runs("retried").get(0).state() == RunState.SUCCEEDED);
    TaskRun gone = runs("gone").get(0);
    assertThat(gone.noticedAt()).isPresent();
    assertThat(gone.detail().orElseThrow()).contains("runner crashed-node (attempt 1) disconnected; noticed by a");
    TaskRun again = runs("retried").get(0);
    assertThat(again.attempt()).isEqualTo(2);
    assertThat(again.node()).contains("a");
    assertThat(again.detail().orElseThrow()).contains("attempt 1 by crashed-node disconnected; retried by a");
    assertThat(retried.getCount()).isZero();
  }

  /**
   * The runner's backends are all terminated mid-run while its code goes on (it ignores the
   * interrupt): another node finds the row running with the task lock free, and retries the slot as
   * attempt 2. When the first runner's code finally returns, its late record does not overwrite the
   * retry's row (the fencing token in the update).
   */
  @Test
  void runnerCutOffMidRun_anotherNodeRetries_theLateFirstRunnerCannotOverwrite() throws Exception {
    PgLocks locksA = PgLocks.builder(TestDatabase.get().dataSource("ds-cut-a")).namespace(namespace)
        .nodeName("cut-a").build();
    open.add(locksA);
    Scheduler a = Scheduler.builder(locksA).pollInterval(Duration.ofMillis(100)).sweepInterval(Duration.ofMillis(200))
        .closeTimeout(Duration.ofSeconds(5)).build();
    open.add(a);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger firstRunnerDone = new AtomicInteger();
    CountDownLatch secondAttempt = new CountDownLatch(1);
    TaskBody body = ctx -> {
      if (ctx.node().equals("cut-a")) {
        while (true) { // code that ignores interrupts: it goes on after losing its lock
          try {
            release.await();
            break;
          } catch (InterruptedException ignored) {
            // ignored on purpose
          }
        }
        firstRunnerDone.incrementAndGet();
      } else {
        secondAttempt.countDown();
      }
    };
    a.register(Task.builder("cut", Schedule.cron("0 0 0 1 1 *")).retryDisconnected(2).build(body)).start();
    a.trigger("cut");
    Await.until("the run on a", WAIT, () -> !runs("cut").isEmpty() && runs("cut").get(0).state() == RunState.RUNNING);
    Scheduler b = node("cut-b");
    b.register(Task.builder("cut", Schedule.cron("0 0 0 1 1 *")).retryDisconnected(2).build(body)).start();

    try (Connection admin = TestDatabase.get().connect(); PreparedStatement ps = admin.prepareStatement(
        "SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity"
            + " WHERE application_name LIKE 'pglock:cut-a:%' OR application_name = 'ds-cut-a'")) {
      ps.execute();
    }
    assertThat(secondAttempt.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("attempt 2 ran on b").isTrue();
    Await.until("attempt 2 recorded", WAIT, () -> runs("cut").get(0).state() == RunState.SUCCEEDED);
    release.countDown();
    Await.until("the first runner's code returned", WAIT, () -> firstRunnerDone.get() == 1);
    a.close(); // waits for a's run to record (or fail to)
    TaskRun row = runs("cut").get(0);
    assertThat(runs("cut")).hasSize(1);
    assertThat(row.state()).isEqualTo(RunState.SUCCEEDED);
    assertThat(row.attempt()).isEqualTo(2);
    assertThat(row.node()).contains("cut-b");
    assertThat(row.detail().orElseThrow()).contains("attempt 1 by cut-a disconnected; retried by cut-b");
  }

  @Test
  void pruning_keepsEachTasksNewestRow_whateverItsAge() throws Exception {
    Instant old = Instant.now().minus(Duration.ofDays(30)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    insertRun("pruned", old.minusSeconds(60));
    insertRun("pruned", old);
    io.pglock.schedule.internal.RunTable table = new io.pglock.schedule.internal.RunTable("pglock");
    try (Connection c = TestDatabase.get().connect()) {
      c.setAutoCommit(true);
      assertThat(table.prune(c, namespace, Duration.ofMinutes(1), 1000)).isEqualTo(1);
      assertThat(table.prune(c, namespace, Duration.ofMinutes(1), 1000)).isZero();
    }
    assertThat(runs("pruned")).extracting(TaskRun::slot).containsExactly(old);
  }

  @Test
  void badUse_clearErrors() {
    Scheduler s = node("a");
    Task t = Task.builder("t", Schedule.fixedRate(Duration.ofSeconds(1))).build(ctx -> { });
    s.register(t);
    assertThatThrownBy(() -> s.register(t)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("registered on this scheduler already");
    assertThatThrownBy(() -> Scheduler.builder((PgLocks) open.get(0)).pollInterval(Duration.ofMillis(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("pollInterval must be from PT0.05S");
    s.close();
    assertThatThrownBy(() -> s.register(Task.builder("u", Schedule.fixedRate(Duration.ofSeconds(1))).build(c -> { })))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
  }

  private void insertRun(String task, Instant slot) throws Exception {
    try (Connection c = TestDatabase.get().connect(); PreparedStatement ps = c.prepareStatement(
        "INSERT INTO pglock.task_run (namespace, task, slot, kind, state, node, started_at, finished_at)"
            + " VALUES (?, ?, ?, 'scheduled', 'succeeded', 'earlier', ?, ?)")) {
      ps.setString(1, namespace);
      ps.setString(2, task);
      ps.setTimestamp(3, Timestamp.from(slot));
      ps.setTimestamp(4, Timestamp.from(slot));
      ps.setTimestamp(5, Timestamp.from(slot));
      ps.execute();
    }
  }

  private void insertRunning(String task, Instant slot, String node) throws Exception {
    try (Connection c = TestDatabase.get().connect(); PreparedStatement ps = c.prepareStatement(
        "INSERT INTO pglock.task_run (namespace, task, slot, kind, state, node, fencing_token, started_at)"
            + " VALUES (?, ?, ?, 'scheduled', 'running', ?, 1, ?)")) {
      ps.setString(1, namespace);
      ps.setString(2, task);
      ps.setTimestamp(3, Timestamp.from(slot));
      ps.setString(4, node);
      ps.setTimestamp(5, Timestamp.from(slot));
      ps.execute();
    }
  }

  static int count(Connection c, String sql) throws Exception {
    try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
