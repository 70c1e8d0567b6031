package io.pglock.cli;

import io.pglock.schedule.TaskAdmin;
import io.pglock.schedule.TaskRun;
import io.pglock.schedule.TaskStatus;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code pglock tasks}: the scheduled tasks of a namespace (schedule, paused or not, next slot,
 * latest runs and their outcomes), and {@code pglock tasks runs|trigger|pause|resume NAME}. Reads
 * and changes {@code <schema>.scheduled_task} and {@code <schema>.task_run} through
 * {@link TaskAdmin}. Exit codes: 0 done, 1 no such task (or none), 2 bad options, 3 database
 * unreachable, 5 schema missing.
 */
@Command(name = "tasks",
    mixinStandardHelpOptions = true,
    header = "Shows the scheduled tasks; triggers, pauses and resumes them.",
    description = {
        "%nEach task registered by a scheduler in the namespace: its schedule, whether it is paused, its next "
            + "slot, and its latest runs (newest first: state, slot, node). Failed runs show their error. Reads "
            + "<schema>.scheduled_task and <schema>.task_run (PgLockSchema.migrate, schema version 8 or later).%n"},
    subcommands = {TasksCommand.Runs.class, TasksCommand.Trigger.class, TasksCommand.Pause.class,
        TasksCommand.Resume.class},
    footerHeading = "%nExamples:%n",
    footer = {
        "  pglock tasks --namespace billing",
        "  pglock tasks runs nightly-report --namespace billing --limit 50",
        "  pglock tasks trigger nightly-report --namespace billing",
        "  pglock tasks pause nightly-report --namespace billing"},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:done",
        "1:no task: none is registered in the namespace, or not the one named",
        "2:bad options",
        "3:the database could not be reached",
        "5:pglock's schema (or its task tables) is missing: run PgLockSchema.migrate",
        "6:the role lacks a privilege (CONNECT on the database, USAGE on the schema, or one on a table, view or function): the message names the GRANT to run"})
public final class TasksCommand implements Callable<Integer> {
  /** How long a query may take, and connecting. */
  static final Duration QUERY_TIMEOUT = Duration.ofSeconds(10);

  @Spec
  private CommandSpec spec;

  @Mixin
  private DatabaseOptions database;

  @Mixin
  private NamespaceOption namespace;

  @Mixin
  private SchemaOption schema;

  @Option(names = "--runs", defaultValue = "3", paramLabel = "N",
      description = "How many of each task's latest runs to show (0 to 100, default ${DEFAULT-VALUE}).")
  private int runs;

  private TaskAdmin admin() {
    return TaskAdmin.of(database.readingDataSource(QUERY_TIMEOUT), schema.schema(), namespace.namespace());
  }

  @Override
  public Integer call() {
    if (runs < 0 || runs > 100) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--runs must be from 0 to 100: " + runs);
    }
    List<TaskStatus> tasks = admin().tasks(runs);
    PrintWriter out = spec.commandLine().getOut();
    if (tasks.isEmpty()) {
      out.println("no tasks in namespace " + namespace.namespace());
      out.flush();
      return ExitCodes.NO_TASK;
    }
    TextTable table = new TextTable(List.of("TASK", "SCHEDULE", "STATE", "NEXT SLOT", "LATEST RUNS"),
        40, 50, 10, 30, 200);
    Instant now = Instant.now();
    for (TaskStatus t : tasks) {
      List<String> latest = new ArrayList<>();
      for (TaskRun r : t.lastRuns()) {
        latest.add(lower(r.state()) + " " + r.slot() + r.node().map(n -> " (" + n + ")").orElse(""));
      }
      String state = t.paused() ? "paused" : "active";
      if (t.triggeredAt().isPresent()) {
        state += ", triggered";
      }
      table.add(List.of(t.name(), t.schedule(), state,
          t.nextSlot().map(s -> s + " (" + relative(Duration.between(now, s)) + ")").orElse("-"),
          latest.isEmpty() ? "-" : String.join("; ", latest)));
    }
    table.lines().forEach(out::println);
    for (TaskStatus t : tasks) {
      for (TaskRun r : t.lastRuns()) {
        if (r.errorClass().isPresent()) {
          out.println(t.name() + " " + r.slot() + ": " + r.errorClass().get() + ": " + r.errorMessage().orElse(""));
        }
      }
    }
    out.flush();
    return ExitCodes.OK;
  }

  static String lower(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT);
  }

  private static String relative(Duration d) {
    return d.isNegative() ? Ages.format(d.negated()) + " ago" : "in " + Ages.format(d);
  }

  /** A subcommand on one task, with the database, namespace and schema options of its own. */
  abstract static class OnTask implements Callable<Integer> {
    @Spec
    CommandSpec spec;
    @Mixin
    private DatabaseOptions database;
    @Mixin
    private NamespaceOption namespace;
    @Mixin
    private SchemaOption schema;
    @Parameters(index = "0", paramLabel = "NAME", description = "The task's name.")
    String task;

    TaskAdmin admin() {
      return TaskAdmin.of(database.readingDataSource(QUERY_TIMEOUT), schema.schema(), namespace.namespace());
    }

    /** Runs a change on the task; 1 with a message if there is no such task. */
    int change(String done, java.util.function.Consumer<TaskAdmin> change) {
      try {
        change.accept(admin());
      } catch (IllegalArgumentException e) {
        PrintWriter err = spec.commandLine().getErr();
        err.println("pglock tasks " + spec.name() + ": " + e.getMessage());
        err.flush();
        return ExitCodes.NO_TASK;
      }
      PrintWriter out = spec.commandLine().getOut();
      out.println("task " + task + " (namespace " + namespace.namespace() + "): " + done);
      out.flush();
      return ExitCodes.OK;
    }

    String namespaceName() {
      return namespace.namespace();
    }
  }

  static String operator() {
    return "pglock-cli:" + System.getProperty("user.name", "?");
  }

  /** {@code pglock tasks runs NAME}. */
  @Command(name = "runs", mixinStandardHelpOptions = true, header = "Shows a task's latest runs, newest first.")
  static final class Runs extends OnTask {
    @Option(names = "--limit", defaultValue = "20", paramLabel = "N", description = "How many (1 to 10000, default ${DEFAULT-VALUE}).")
    private int limit;

    @Override
    public Integer call() {
      if (limit < 1 || limit > 10_000) {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--limit must be from 1 to 10000: " + limit);
      }
      List<TaskRun> runs = admin().runs(task, limit);
      PrintWriter out = spec.commandLine().getOut();
      if (runs.isEmpty()) {
        out.println("no runs of task " + task + " in namespace " + namespaceName());
        out.flush();
        return ExitCodes.NO_TASK;
      }
      TextTable table = new TextTable(List.of("SLOT", "KIND", "STATE", "ATTEMPT", "NODE", "STARTED", "TOOK", "DETAIL"),
          30, 10, 12, 7, 40, 30, 12, 120);
      for (TaskRun r : runs) {
        String took = r.startedAt().isPresent() && r.finishedAt().isPresent()
            ? Duration.between(r.startedAt().get(), r.finishedAt().get()).toMillis() + " ms" : "-";
        String detail = r.errorClass().map(c -> c + ": " + r.errorMessage().orElse("")).orElse(r.detail().orElse(""));
        table.add(List.of(r.slot().toString(), lower(r.kind()), lower(r.state()), Integer.toString(r.attempt()),
            r.node().orElse("-"), r.startedAt().map(Instant::toString).orElse("-"), took, detail));
      }
      table.lines().forEach(out::println);
      out.flush();
      return ExitCodes.OK;
    }
  }

  /** {@code pglock tasks trigger NAME}. */
  @Command(name = "trigger", mixinStandardHelpOptions = true, header = "Runs a task once now, on one of its nodes.")
  static final class Trigger extends OnTask {
    @Override
    public Integer call() {
      return change("triggered: one of its nodes runs it within its poll interval", a -> a.trigger(task, operator()));
    }
  }

  /** {@code pglock tasks pause NAME}. */
  @Command(name = "pause", mixinStandardHelpOptions = true, header = "Pauses a task on every node.")
  static final class Pause extends OnTask {
    @Override
    public Integer call() {
      return change("paused", a -> a.pause(task, operator()));
    }
  }

  /** {@code pglock tasks resume NAME}. */
  @Command(name = "resume", mixinStandardHelpOptions = true, header = "Resumes a paused task on every node.")
  static final class Resume extends OnTask {
    @Override
    public Integer call() {
      return change("resumed", a -> a.resume(task, operator()));
    }
  }
}
