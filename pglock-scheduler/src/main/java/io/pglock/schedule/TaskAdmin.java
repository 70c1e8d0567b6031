package io.pglock.schedule;

import io.pglock.LockSessionException;
import io.pglock.SchemaMissingException;
import io.pglock.schedule.internal.RunTable;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Operator access to a namespace's scheduled tasks, without a scheduler: list them with their
 * latest runs, pause, resume and trigger them (what {@code pglock tasks} does). Each call borrows
 * one connection from the data source.
 */
public final class TaskAdmin {
  /** SQLSTATE undefined_table, invalid_schema_name: the schema lacks the task tables. */
  private static final List<String> MISSING = List.of("42P01", "3F000");
  /** The longest one call waits for the server's answers. */
  private static final int NETWORK_TIMEOUT_MILLIS = 10_000;

  private final DataSource dataSource;
  private final String schema;
  private final String namespace;
  private final RunTable table;

  private TaskAdmin(DataSource dataSource, String schema, String namespace) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.table = new RunTable(schema);
    this.schema = schema;
    this.namespace = io.pglock.LockKey.checkNamespace(namespace);
  }

  /**
   * Access to one namespace's tasks.
   *
   * @param dataSource connections to the database
   * @param schema the schema of pglock's objects, such as {@code "pglock"}
   * @param namespace the namespace of the schedulers' {@code PgLocks}
   * @return the access
   * @throws IllegalArgumentException if the schema or namespace is not valid
   */
  public static TaskAdmin of(DataSource dataSource, String schema, String namespace) {
    return new TaskAdmin(dataSource, schema, namespace);
  }

  /**
   * Every task of the namespace with its latest runs.
   *
   * @param runsPerTask how many runs per task, 0 to 1000
   * @return the tasks, by name
   */
  public List<TaskStatus> tasks(int runsPerTask) {
    if (runsPerTask < 0 || runsPerTask > 1000) {
      throw new IllegalArgumentException("runsPerTask must be from 0 to 1000: " + runsPerTask);
    }
    return call("list the tasks", c -> table.statuses(c, namespace, runsPerTask));
  }

  /**
   * A task's latest runs, newest first.
   *
   * @param task the task's name
   * @param limit 1 to 10000
   * @return the runs
   */
  public List<TaskRun> runs(String task, int limit) {
    if (limit < 1 || limit > 10_000) {
      throw new IllegalArgumentException("limit must be from 1 to 10000: " + limit);
    }
    return call("read the runs of " + task, c -> table.runs(c, namespace, task, limit));
  }

  /**
   * Pauses a task on every node.
   *
   * @param task the task's name
   * @param by who pauses it, for the record
   * @throws IllegalArgumentException if there is no such task in the namespace
   */
  public void pause(String task, String by) {
    known(task, call("pause " + task, c -> table.setPaused(c, namespace, task, true, by)));
  }

  /**
   * Resumes a task on every node.
   *
   * @param task the task's name
   * @param by who resumes it, for the record
   * @throws IllegalArgumentException if there is no such task in the namespace
   */
  public void resume(String task, String by) {
    known(task, call("resume " + task, c -> table.setPaused(c, namespace, task, false, by)));
  }

  /**
   * Asks for one manual run of a task, taken by one of its nodes.
   *
   * @param task the task's name
   * @param by who triggers it, for the record
   * @throws IllegalArgumentException if there is no such task in the namespace
   */
  public void trigger(String task, String by) {
    known(task, call("trigger " + task, c -> table.trigger(c, namespace, task, by)));
  }

  private void known(String task, boolean found) {
    if (!found) {
      throw new IllegalArgumentException("no task \"" + task + "\" in namespace " + namespace
          + ": tasks are known once a scheduler registered them (Scheduler.register)");
    }
  }

  private interface Work<T> {
    T apply(Connection c) throws SQLException;
  }

  private <T> T call(String what, Work<T> work) {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      int timeout = c.getNetworkTimeout();
      c.setAutoCommit(true);
      c.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS); // a silent network fails the call, in time
      try {
        return work.apply(c);
      } finally {
        c.setNetworkTimeout(Runnable::run, timeout); // a pooled connection goes back as it came
        c.setAutoCommit(autoCommit);
      }
    } catch (SQLException e) {
      if (MISSING.contains(e.getSQLState())) {
        throw new SchemaMissingException("the task tables of schema \"" + schema + "\" are missing: they need"
            + " pglock's schema at version 8 or later; run PgLockSchema.migrate(dataSource, \"" + schema + "\")");
      }
      throw new LockSessionException("could not " + what + ": " + e.getMessage() + " (SQLSTATE " + e.getSQLState()
          + ")", e);
    }
  }

  @Override
  public String toString() {
    return "TaskAdmin[schema=" + schema + ", namespace=" + namespace + "]";
  }
}
