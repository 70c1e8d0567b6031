package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.schedule.RunKind;
import io.pglock.schedule.Schedule;
import io.pglock.schedule.Scheduler;
import io.pglock.schedule.Task;
import io.pglock.schedule.TaskAdmin;
import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@code pglock tasks} against a scheduler run by this test in a namespace of its own. */
@ExtendWith(NoLeakedLocks.class)
class TasksCommandTest {
  private final String namespace = "cli-tasks-" + UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @AfterEach
  void cleanUp() throws Exception {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement a = c.prepareStatement("DELETE FROM pglock.task_run WHERE namespace = ?");
        PreparedStatement b = c.prepareStatement("DELETE FROM pglock.scheduled_task WHERE namespace = ?")) {
      a.setString(1, namespace);
      a.execute();
      b.setString(1, namespace);
      b.execute();
    }
  }

  /** {@code pglock <words...> --url ... --namespace <ns> <options...>}. */
  private CliRun tasks(String... words) {
    TestDatabase db = TestDatabase.get();
    List<String> args = new ArrayList<>(List.of("tasks"));
    args.addAll(List.of(words));
    args.addAll(List.of("--url", db.jdbcUrl(), "--namespace", namespace));
    if (db.user() != null) {
      args.addAll(List.of("--user", db.user()));
    }
    if (db.password() != null) {
      args.addAll(List.of("--password", db.password()));
    }
    return CliRun.of(args.toArray(String[]::new));
  }

  @Test
  void tasks_listTriggerPauseResume_andRuns() {
    assertThat(tasks().exitCode()).as("no tasks yet").isEqualTo(ExitCodes.NO_TASK);
    try (PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).namespace(namespace).nodeName("cli-node")
        .build();
        Scheduler scheduler = Scheduler.builder(locks).pollInterval(Duration.ofMillis(100)).build()) {
      scheduler.register(Task.builder("report", Schedule.cron("0 0 0 1 1 *")).build(ctx -> {
        if (ctx.kind() == RunKind.MANUAL) {
          throw new IllegalStateException("no data for " + ctx.slot());
        }
      })).start();

      CliRun list = tasks();
      assertThat(list.exitCode()).as(list.describe()).isEqualTo(ExitCodes.OK);
      assertThat(list.out()).as(list.describe())
          .containsPattern("NAMESPACE\\s+TASK\\s+SCHEDULE\\s+STATE\\s+NODES\\s+NEXT SLOT\\s+LAST RUN")
          .containsPattern(namespace + "\\s+report\\s+cron \"0 0 0 1 1 \\*\" Z\\s+active\\s+live: cli-node");

      CliRun trigger = tasks("trigger", "report");
      assertThat(trigger.exitCode()).as(trigger.describe()).isEqualTo(ExitCodes.OK);
      assertThat(trigger.out()).startsWith("task report (namespace " + namespace + "): triggered");
      TaskAdmin admin = TaskAdmin.of(TestDatabase.get().dataSource(), "pglock", namespace);
      Await.until("the manual run", Duration.ofSeconds(20), () -> !admin.runs("report", 5).isEmpty()
          && admin.runs("report", 5).get(0).finishedAt().isPresent());

      CliRun runs = tasks("runs", "report");
      assertThat(runs.exitCode()).as(runs.describe()).isEqualTo(ExitCodes.OK);
      assertThat(runs.out()).as(runs.describe()).contains("manual").contains("failed")
          .contains("java.lang.IllegalStateException: no data for");
      assertThat(tasks().out()).contains("failed").contains("report ").contains("IllegalStateException");

      assertThat(tasks("pause", "report").exitCode()).isEqualTo(ExitCodes.OK);
      assertThat(tasks().out()).containsPattern("report\\s+.*\\s+paused");
      assertThat(tasks("resume", "report").exitCode()).isEqualTo(ExitCodes.OK);
      assertThat(tasks().out()).containsPattern("report\\s+.*\\s+active");

      CliRun unknown = tasks("trigger", "nope");
      assertThat(unknown.exitCode()).isEqualTo(ExitCodes.NO_TASK);
      assertThat(unknown.err()).contains("no task \"nope\" in namespace " + namespace);
    }
  }

  @Test
  void tasks_help_showsExamples() {
    CliRun run = CliRun.of("tasks", "--help");
    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("pglock tasks trigger nightly-report --namespace billing")
        .containsPattern("1\\s+no task");
  }
}
