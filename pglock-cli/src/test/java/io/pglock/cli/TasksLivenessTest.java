package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.schedule.Schedule;
import io.pglock.schedule.Scheduler;
import io.pglock.schedule.Task;
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
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code pglock tasks} tells live tasks from those whose nodes are gone, shows every namespace,
 * cuts nothing, and deletes a task. Before: a task whose only node had stopped showed
 * {@code active}, only namespace {@code default} was listed, the runs column was cut mid-word,
 * and there was no {@code delete}.
 */
@ExtendWith(NoLeakedLocks.class)
class TasksLivenessTest {
  /** Start-ups and a backend's exit on a loaded machine: generous. */
  private static final Duration SHOWN = Duration.ofSeconds(30);
  private final String suffix = UUID.randomUUID().toString().substring(0, 8);
  private final String first = "cli-live-a-" + suffix;
  private final String second = "cli-live-b-" + suffix;

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @AfterEach
  void cleanUp() throws Exception {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement a = c.prepareStatement("DELETE FROM pglock.task_run WHERE namespace IN (?, ?)");
        PreparedStatement b = c.prepareStatement("DELETE FROM pglock.scheduled_task WHERE namespace IN (?, ?)")) {
      for (PreparedStatement ps : List.of(a, b)) {
        ps.setString(1, first);
        ps.setString(2, second);
        ps.execute();
      }
    }
  }

  @Test
  void aTaskWhoseNodeStopped_isNotActive_andNamesTheGoneNode_whileEveryNamespaceIsListedUncut() throws Exception {
    String longName = "monthly-reconciliation-of-every-ledger-against-the-bank-statements-" + suffix;
    String node = "node-" + suffix;
    try (PgLocks a = locks(first, node); Scheduler sa = Scheduler.builder(a).build();
        PgLocks b = locks(second, "other-" + suffix); Scheduler sb = Scheduler.builder(b).build()) {
      sa.register(Task.builder(longName, Schedule.cron("0 0 0 1 1 *")).build(ctx -> { })).start();
      sb.register(Task.builder("report", Schedule.cron("0 0 0 1 1 *")).build(ctx -> { })).start();

      CliRun all = CliRun.onDatabase("tasks");
      assertThat(all.exitCode()).as(all.describe()).isZero();
      assertThat(all.out()).as("every namespace, the names whole; " + all.describe())
          .containsPattern(first + "\\s+" + longName + "\\s+cron \"0 0 0 1 1 \\*\" Z\\s+active\\s+live: " + node)
          .containsPattern(second + "\\s+report\\s+.*active\\s+live: other-" + suffix);
      CliRun one = CliRun.onDatabase("tasks", "--namespace", second);
      assertThat(one.out()).as(one.describe()).contains("report").doesNotContain(longName);
    }
    // Both schedulers and their lock sessions are closed now: nobody runs these tasks.
    AtomicReference<CliRun> last = new AtomicReference<>();
    Await.until("pglock tasks to show the task without a live node", SHOWN, () -> {
      last.set(CliRun.onDatabase("tasks", "--namespace", first));
      return last.get().out().contains("no live node");
    });
    assertThat(last.get().out()).as(last.get().describe())
        .containsPattern(longName + "\\s+cron \"0 0 0 1 1 \\*\" Z\\s+no live node\\s+gone: " + node)
        .doesNotContain("active");
  }

  @Test
  void delete_refusesWhileANodeIsLive_forceDeletes_andAGoneTaskIsDeletedWithItsRuns() throws Exception {
    String node = "node-" + suffix;
    try (PgLocks a = locks(first, node); Scheduler sa = Scheduler.builder(a).pollInterval(Duration.ofMillis(100))
        .build()) {
      sa.register(Task.builder("kept", Schedule.cron("0 0 0 1 1 *")).build(ctx -> { }))
          .register(Task.builder("forced", Schedule.cron("0 0 0 1 1 *")).build(ctx -> { })).start();

      CliRun refused = delete("kept");
      assertThat(refused.exitCode()).as(refused.describe()).isEqualTo(ExitCodes.NO_TASK);
      assertThat(refused.err()).as(refused.describe()).contains("task kept (namespace " + first + ") was not deleted")
          .contains("live: " + node).contains("--force");
      assertThat(taskRows("kept")).isEqualTo(1);

      CliRun forced = delete("forced", "--force");
      assertThat(forced.exitCode()).as(forced.describe()).isZero();
      assertThat(forced.out()).startsWith("task forced (namespace " + first + "): deleted, with 0 runs (--force: live: "
          + node);
      assertThat(taskRows("forced")).isZero();

      // a run on record, to be deleted with the task
      sa.trigger("kept");
      Await.until("the manual run of kept", SHOWN, () -> runRows("kept") > 0);

    }
    Await.until("the node to be gone", SHOWN, () -> CliRun.onDatabase("tasks", "--namespace", first).out()
        .contains("no live node"));
    CliRun deleted = delete("kept");
    assertThat(deleted.exitCode()).as(deleted.describe()).isZero();
    assertThat(deleted.out()).startsWith("task kept (namespace " + first + "): deleted, with 1 run");
    assertThat(taskRows("kept")).isZero();
    assertThat(runRows("kept")).isZero();

    CliRun missing = delete("kept");
    assertThat(missing.exitCode()).isEqualTo(ExitCodes.NO_TASK);
    assertThat(missing.err()).contains("no task \"kept\" in namespace " + first);
  }

  private static PgLocks locks(String namespace, String node) {
    return PgLocks.builder(TestDatabase.get().dataSource()).namespace(namespace).nodeName(node).build();
  }

  private CliRun delete(String task, String... more) {
    TestDatabase db = TestDatabase.get();
    List<String> args = new ArrayList<>(List.of("tasks", "delete", task, "--namespace", first, "--url", db.jdbcUrl()));
    if (db.user() != null) {
      args.addAll(List.of("--user", db.user()));
    }
    if (db.password() != null) {
      args.addAll(List.of("--password", db.password()));
    }
    args.addAll(List.of(more));
    return CliRun.of(args.toArray(String[]::new));
  }

  private int taskRows(String task) {
    return count("SELECT count(*) FROM pglock.scheduled_task WHERE namespace = ? AND name = ?", task);
  }

  private int runRows(String task) {
    return count("SELECT count(*) FROM pglock.task_run WHERE namespace = ? AND task = ?", task);
  }

  private int count(String sql, String task) {
    try (Connection c = TestDatabase.get().connect(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, first);
      ps.setString(2, task);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    } catch (java.sql.SQLException e) {
      throw new AssertionError(e);
    }
  }
}
