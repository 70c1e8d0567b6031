package io.pglock.cli;

import io.pglock.LockSessionException;
import io.pglock.SchemaMissingException;
import io.pglock.schedule.TaskAdmin;
import io.pglock.schedule.TaskRun;
import io.pglock.schedule.TaskStatus;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.sql.SQLException;
import javax.sql.DataSource;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code pglock tasks}: the scheduled tasks of every namespace, or of one (schedule, state, the
 * nodes that run it and whether they are alive, next slot, latest runs and their outcomes), and
 * {@code pglock tasks runs|trigger|pause|resume|delete NAME}. Reads and changes
 * {@code <schema>.scheduled_task} and {@code <schema>.task_run} through {@link TaskAdmin}, and
 * judges liveness with {@link TaskLiveness}. Exit codes: 0 done, 1 no such task (or none, or a
 * delete refused), 2 bad options, 3 database unreachable, 5 schema missing, 6 a privilege missing.
 */
@Command(name = "tasks",
    mixinStandardHelpOptions = true,
    header = "Shows the scheduled tasks; triggers, pauses, resumes and deletes them.",
    description = {
        "%nEach task registered by a scheduler, in every namespace unless --namespace names one: its schedule; "
            + "its STATE: active, paused, or \"no live node\" when no node that registered or ran it is connected "
            + "now, so nobody will run its next slot; its NODES: running on the node that runs a slot now, the "
            + "live ones, or gone ones and when one last ran it; its next slot and its last run. Below the table, "
            + "the latest runs (newest first: state, slot, node) and the errors of failed ones. Reads "
            + "<schema>.scheduled_task and <schema>.task_run (PgLockSchema.migrate, schema version 8 or later), "
            + "pg_locks and pg_stat_activity.%n"},
    subcommands = {TasksCommand.Runs.class, TasksCommand.Trigger.class, TasksCommand.Pause.class,
        TasksCommand.Resume.class, TasksCommand.Delete.class},
    footerHeading = "%nExamples:%n",
    footer = {
        "  pglock tasks",
        "  pglock tasks --namespace billing",
        "  pglock tasks runs nightly-report --namespace billing --limit 50",
        "  pglock tasks trigger nightly-report --namespace billing",
        "  pglock tasks pause nightly-report --namespace billing",
        "  pglock tasks delete old-report --namespace billing"},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:done",
        "1:no task: none is registered (in the namespace), or not the one named; or delete refused: a node is live",
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
  private NamespaceFilter namespaces;

  @Mixin
  private SchemaOption schema;

  @Option(names = "--runs", defaultValue = "3", paramLabel = "N",
      description = "How many of each task's latest runs to show below the table (0 to 100, default "
          + "${DEFAULT-VALUE}).")
  private int runs;

  @Override
  public Integer call() {
    if (runs < 0 || runs > 100) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--runs must be from 0 to 100: " + runs);
    }
    Optional<String> only = namespaces.namespace();
    DataSource ds = database.readingDataSource(QUERY_TIMEOUT);
    TaskLiveness liveness = new TaskLiveness(ds, schema.schema());
    List<String> nss = only.isPresent() ? List.of(only.get()) : sql("list the namespaces", liveness::namespaces);
    PrintWriter out = spec.commandLine().getOut();
    // No column is cut: a cut name or node cannot be copied into the next command.
    TextTable table = new TextTable(List.of("NAMESPACE", "TASK", "SCHEDULE", "STATE", "NODES", "NEXT SLOT",
        "LAST RUN"), UNCUT, UNCUT, UNCUT, UNCUT, UNCUT, UNCUT, UNCUT);
    List<String> below = new ArrayList<>();
    List<String> errors = new ArrayList<>();
    Instant now = Instant.now();
    for (String ns : nss) {
      List<TaskStatus> tasks = TaskAdmin.of(ds, schema.schema(), ns).tasks(runs);
      Map<String, TaskLiveness.Status> live = sql("judge the tasks' nodes", () -> liveness.of(ns));
      for (TaskStatus t : tasks) {
        TaskLiveness.Status l = live.getOrDefault(t.name(),
            new TaskLiveness.Status(false, Optional.empty(), List.of(), List.of(), Optional.empty()));
        List<String> latest = new ArrayList<>();
        for (TaskRun r : t.lastRuns()) {
          latest.add(lower(r.state()) + " " + r.slot() + r.node().map(n -> " (" + n + ")").orElse(""));
          if (r.errorClass().isPresent()) {
            errors.add("  " + ns + " " + t.name() + " " + r.slot() + ": " + r.errorClass().get() + ": "
                + r.errorMessage().orElse("").replaceAll("\\s+", " "));
          }
        }
        table.add(List.of(ns, t.name(), t.schedule(), state(t, l), nodes(l, now),
            t.nextSlot().map(s -> s + " (" + relative(Duration.between(now, s)) + ")").orElse("-"),
            t.lastRuns().isEmpty() ? "-" : latest.get(0)));
        if (latest.size() > 1) {
          below.add("  " + ns + " " + t.name() + ": " + String.join("; ", latest));
        }
      }
    }
    if (table.isEmpty()) {
      out.println(only.map(ns -> "no tasks in namespace " + ns).orElse("no tasks in any namespace"));
      out.flush();
      return ExitCodes.NO_TASK;
    }
    table.lines().forEach(out::println);
    if (!below.isEmpty()) {
      out.println();
      out.println("latest runs, newest first:");
      below.forEach(out::println);
    }
    if (!errors.isEmpty()) {
      out.println();
      out.println("errors of those runs:");
      errors.forEach(out::println);
    }
    out.flush();
    return ExitCodes.OK;
  }

  /**
   * paused; active while a node runs it or a node that ran it is connected; else "no live node":
   * nobody will run its next slot.
   */
  static String state(TaskStatus t, TaskLiveness.Status l) {
    String state = t.paused() ? "paused" : l.live() ? "active" : "no live node";
    return t.triggeredAt().isPresent() ? state + ", triggered" : state;
  }

  /** running on X; live: a, b; or gone: the nodes last seen, and when. */
  static String nodes(TaskLiveness.Status l, Instant now) {
    if (l.running()) {
      return "running" + l.runningNode().map(n -> " on " + n).orElse("")
          + (l.liveNodes().isEmpty() ? "" : "; live: " + names(l.liveNodes()));
    }
    if (!l.liveNodes().isEmpty()) {
      return "live: " + names(l.liveNodes());
    }
    if (l.goneNodes().isEmpty()) {
      return "none seen";
    }
    return "gone: " + names(l.goneNodes())
        + l.lastSeen().map(s -> ", last ran " + Ages.format(Duration.between(s, now)) + " ago").orElse("");
  }

  private static String names(List<String> nodes) {
    return nodes.size() <= 3 ? String.join(", ", nodes)
        : String.join(", ", nodes.subList(0, 3)) + " and " + (nodes.size() - 3) + " more";
  }

  /** No limit on a column's width. */
  private static final int UNCUT = Integer.MAX_VALUE;

  interface SqlWork<T> {
    T call() throws SQLException;
  }

  /** Runs the CLI's own task statements, failing as {@link TaskAdmin} fails. */
  static <T> T sql(String what, SqlWork<T> work) {
    try {
      return work.call();
    } catch (SQLException e) {
      if ("42P01".equals(e.getSQLState()) || "3F000".equals(e.getSQLState()) || "42883".equals(e.getSQLState())) {
        throw new SchemaMissingException("the task tables are missing: they need pglock's schema at version 8 or "
            + "later; run PgLockSchema.migrate(dataSource, schema) (" + e.getMessage() + ")");
      }
      throw new LockSessionException("could not " + what + ": " + e.getMessage() + " (SQLSTATE " + e.getSQLState()
          + ")", e);
    }
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

    DataSource dataSource() {
      return database.readingDataSource(QUERY_TIMEOUT);
    }

    String schemaName() {
      return schema.schema();
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

  /** {@code pglock tasks delete NAME [--force]}. */
  @Command(name = "delete", mixinStandardHelpOptions = true,
      header = "Deletes a task and its run history; refuses while a node is live, unless --force.",
      description = {"%nFor a task no node runs any more (renamed, removed from the code): deletes its row and its "
          + "runs. While a node runs it, or a node that ran it is connected (the NODES column of pglock tasks), it "
          + "refuses and exits 1: such a node keeps running the task's slots, and registers it again at its next "
          + "start. --force deletes it anyway; the task is then not listed until a node registers it again, and "
          + "the runs of the nodes still running it are recorded again.%n"},
      footerHeading = "%nExamples:%n",
      footer = {"  pglock tasks delete old-report --namespace billing"})
  static final class Delete extends OnTask {
    @Option(names = "--force", description = "Delete even while a node runs the task or is connected.")
    private boolean force;

    @Override
    public Integer call() {
      DataSource ds = dataSource();
      String ns = namespaceName();
      PrintWriter err = spec.commandLine().getErr();
      TaskLiveness.Status l = sql("judge the task's nodes", () -> new TaskLiveness(ds, schemaName()).of(ns)).get(task);
      if (l == null) {
        err.println("pglock tasks delete: no task \"" + task + "\" in namespace " + ns);
        err.flush();
        return ExitCodes.NO_TASK;
      }
      if (l.live() && !force) {
        err.println("pglock tasks delete: task " + task + " (namespace " + ns + ") was not deleted: "
            + nodes(l, Instant.now()) + ". A live node keeps running its slots and registers it again at its next "
            + "start: stop those nodes, or remove the task from their code and restart them, then delete it; or "
            + "delete it anyway with --force");
        err.flush();
        return ExitCodes.NO_TASK;
      }
      int deletedRuns = sql("delete task " + task, () -> delete(ds, ns));
      if (deletedRuns < 0) {
        err.println("pglock tasks delete: no task \"" + task + "\" in namespace " + ns);
        err.flush();
        return ExitCodes.NO_TASK;
      }
      PrintWriter out = spec.commandLine().getOut();
      out.println("task " + task + " (namespace " + ns + "): deleted, with " + deletedRuns + " run"
          + (deletedRuns == 1 ? "" : "s") + (l.live() ? " (--force: " + nodes(l, Instant.now()) + ")" : ""));
      out.flush();
      return ExitCodes.OK;
    }

    /** Deletes the task's runs and row in one transaction: the number of runs, or -1 if there was no row. */
    private int delete(DataSource ds, String ns) throws SQLException {
      try (java.sql.Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        try (java.sql.PreparedStatement runsOf = c.prepareStatement("DELETE FROM " + schemaName() + ".task_run"
                + " WHERE namespace = ? AND task = ?");
            java.sql.PreparedStatement row = c.prepareStatement("DELETE FROM " + schemaName() + ".scheduled_task"
                + " WHERE namespace = ? AND name = ?")) {
          runsOf.setString(1, ns);
          runsOf.setString(2, task);
          int n = runsOf.executeUpdate();
          row.setString(1, ns);
          row.setString(2, task);
          if (row.executeUpdate() == 0) {
            c.rollback();
            return -1;
          }
          c.commit();
          return n;
        } catch (SQLException | RuntimeException e) {
          c.rollback();
          throw e;
        }
      }
    }
  }
}
