package io.pglock.dashboard.internal.data;

import io.pglock.dashboard.internal.view.Chart;
import io.pglock.dashboard.internal.view.Format;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Scheduled tasks (table {@code scheduled_task}) and their runs (table {@code task_run}). */
public final class TasksData {
  /** Runs shown per task in the list. */
  public static final int RUNS_IN_LIST = 5;
  /** Runs per page of one task. */
  public static final int RUNS_PAGE = 50;
  /** A task whose next slot passed this long ago without a run is late. */
  static final Duration LATE = Duration.ofMinutes(1);

  private TasksData() {}

  /**
   * One run of a task.
   *
   * @param slot the slot it ran for
   * @param kind scheduled, catch_up or manual
   * @param state running, succeeded, failed, interrupted, skipped or disconnected
   * @param node the node that ran it
   * @param fencingToken the run's token
   * @param startedAt when it started, or null
   * @param finishedAt when it ended, or null
   * @param lateness how long after its slot it started, or null
   * @param detail why skipped or interrupted, or null
   * @param errorClass the error's class, or null
   * @param errorMessage the error's message, or null
   * @param errorStack the error's stack, or null
   */
  public record Run(Instant slot, String kind, String state, String node, long fencingToken, Instant startedAt,
      Instant finishedAt, Duration lateness, String detail, String errorClass, String errorMessage,
      String errorStack) {
    /** {@return the keyset cursor after this run} */
    public String cursor() {
      return Cursor.of(slot, 0);
    }
  }

  /**
   * One task.
   *
   * @param namespace its namespace
   * @param name its name
   * @param schedule its schedule, as described by the last node that registered it
   * @param paused whether paused
   * @param triggeredAt a trigger not yet taken, or null
   * @param nextSlot the next slot, or null
   * @param updatedBy who changed it last, or null
   * @param runs its latest runs, newest first
   */
  public record Task(String namespace, String name, String schedule, boolean paused, Instant triggeredAt,
      Instant nextSlot, String updatedBy, List<Run> runs) {
    /** {@return true if its next slot passed over a minute ago and it is not paused} */
    public boolean late() {
      return !paused && nextSlot != null && nextSlot.isBefore(Instant.now().minus(LATE))
          && (runs.isEmpty() || !runs.get(0).state().equals("running"));
    }

    /** {@return true if its latest finished run failed} */
    public boolean failing() {
      return runs.stream().filter(r -> !r.state().equals("running")).findFirst()
          .map(r -> r.state().equals("failed") || r.state().equals("disconnected")).orElse(false);
    }
  }

  /** {@return every task (at most 1,000) with its latest runs} */
  public static List<Task> tasks(Db db, String namespace) throws SQLException {
    Map<String, Task> tasks = new LinkedHashMap<>();
    db.list("SELECT t.namespace, t.name, t.schedule, t.paused, t.triggered_at, t.next_slot, t.updated_by,"
        + " r.slot, r.kind, r.state, r.node, r.fencing_token, r.started_at, r.finished_at, r.detail, r.error_class,"
        + " r.error_message, r.error_stack, extract(epoch FROM r.started_at - r.slot) * 1000 AS lateness"
        + " FROM (SELECT * FROM {s}.scheduled_task WHERE (?::text IS NULL OR namespace = ?)"
        + "       ORDER BY namespace, name LIMIT 1000) t"
        + " LEFT JOIN LATERAL (SELECT * FROM {s}.task_run r WHERE r.namespace = t.namespace AND r.task = t.name"
        + "   ORDER BY r.slot DESC LIMIT " + RUNS_IN_LIST + ") r ON true"
        + " ORDER BY t.namespace, t.name, r.slot DESC", ps -> {
          ps.setString(1, namespace);
          ps.setString(2, namespace);
        }, rs -> {
          String key = rs.getString("namespace") + "\u0000" + rs.getString("name");
          Task t = tasks.computeIfAbsent(key, k -> {
            try {
              return new Task(rs.getString("namespace"), rs.getString("name"), rs.getString("schedule"),
                  rs.getBoolean("paused"), Db.instant(rs, "triggered_at"), Db.instant(rs, "next_slot"),
                  rs.getString("updated_by"), new ArrayList<>());
            } catch (SQLException e) {
              throw new IllegalStateException(e);
            }
          });
          if (rs.getTimestamp("slot") != null) {
            t.runs().add(run(rs));
          }
          return t;
        });
    return List.copyOf(tasks.values());
  }

  /** {@return one task with its latest runs, or null if it does not exist} */
  public static Task task(Db db, String namespace, String name) throws SQLException {
    return db.one("SELECT namespace, name, schedule, paused, triggered_at, next_slot, updated_by"
        + " FROM {s}.scheduled_task WHERE namespace = ? AND name = ?", ps -> {
          ps.setString(1, namespace);
          ps.setString(2, name);
        }, rs -> new Task(rs.getString("namespace"), rs.getString("name"), rs.getString("schedule"),
            rs.getBoolean("paused"), Db.instant(rs, "triggered_at"), Db.instant(rs, "next_slot"),
            rs.getString("updated_by"), new ArrayList<>())).orElse(null);
  }

  /** {@return a page of a task's runs, newest slot first (the primary key's order)} */
  public static List<Run> runs(Db db, String namespace, String name, Cursor before, int limit) throws SQLException {
    return db.list("SELECT slot, kind, state, node, fencing_token, started_at, finished_at, detail, error_class,"
        + " error_message, error_stack, extract(epoch FROM started_at - slot) * 1000 AS lateness"
        + " FROM {s}.task_run WHERE namespace = ? AND task = ? AND slot < ? ORDER BY slot DESC LIMIT ?", ps -> {
          ps.setString(1, namespace);
          ps.setString(2, name);
          ps.setTimestamp(3, before == null ? Cursor.END_TIME : before.timestamp());
          ps.setInt(4, limit);
        }, TasksData::run);
  }

  static Run run(ResultSet rs) throws SQLException {
    return new Run(Db.instant(rs, "slot"), rs.getString("kind"), rs.getString("state"), rs.getString("node"),
        rs.getLong("fencing_token"), Db.instant(rs, "started_at"), Db.instant(rs, "finished_at"),
        Db.millis(rs, "lateness"), rs.getString("detail"), rs.getString("error_class"), rs.getString("error_message"),
        rs.getString("error_stack"));
  }

  /** {@return a chart of how late each run started, oldest first, failed runs apart} */
  public static Chart lateness(List<Run> newestFirst) {
    List<Run> runs = new ArrayList<>(newestFirst);
    java.util.Collections.reverse(runs);
    List<String> labels = new ArrayList<>();
    long[][] values = new long[2][runs.size()];
    for (int i = 0; i < runs.size(); i++) {
      Run r = runs.get(i);
      labels.add(Format.time(r.slot()) + " " + r.state());
      long ms = r.lateness() == null ? 0 : Math.max(0, r.lateness().toMillis());
      values[r.state().equals("failed") || r.state().equals("disconnected") ? 1 : 0][i] = Math.max(1, ms);
    }
    return Chart.stacked("Lateness of the latest runs (ms after the slot)", labels, List.of("ok", "failed"), values,
        runs.isEmpty() ? "" : Format.time(runs.get(0).slot()),
        runs.isEmpty() ? "" : Format.time(runs.get(runs.size() - 1).slot()), "");
  }
}
