package io.pglock.schedule.internal;

import io.pglock.schedule.RunKind;
import io.pglock.schedule.RunState;
import io.pglock.schedule.TaskRun;
import io.pglock.schedule.TaskStatus;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The statements on {@code <schema>.scheduled_task} and {@code <schema>.task_run}; every value a
 * bound parameter, the schema a checked identifier. Each method is one statement in autocommit.
 */
public final class RunTable {
  private final String schema;

  public RunTable(String schema) {
    this.schema = io.pglock.internal.schema.SchemaMigrator.checkSchema(schema);
  }

  /**
   * Joined into every statement that decides who runs what (a claim, a retry, a skip, an end):
   * makes its transaction's commit wait at least for the local WAL flush, so that a decision acted
   * on survives a server crash (a lost run row would let the slot run again). Only {@code off} is
   * raised (to {@code on}); a stronger setting of the server or the session ({@code remote_write},
   * {@code remote_apply}, or {@code local}/{@code on}) is kept, as the queue does.
   * {@code set_config(..., true)} lasts until the end of the statement's own transaction
   * (autocommit), and costs no extra round trip.
   */
  static final String DURABLE = "(SELECT set_config('synchronous_commit', CASE current_setting('synchronous_commit')"
      + " WHEN 'off' THEN 'on' ELSE current_setting('synchronous_commit') END, true)) AS durable";

  /** What an attempt to claim a slot found. */
  public enum Claim {
    /** The row is ours: run it. */
    CLAIMED,
    /** A row for the slot exists: someone ran, runs or skipped it. */
    TAKEN,
    /** The slot has not come yet by the database's clock. */
    EARLY
  }

  /**
   * What a claim came to; {@code startedAt} is the row's {@code started_at} when the row is ours
   * (null otherwise), the start that every node's {@link #going} reads.
   */
  public record Claimed(Claim claim, Instant startedAt) {}

  /** A task's latest non-manual row. */
  public record Latest(Instant slot, RunState state, Optional<Instant> finishedAt) {}

  /** A running row, as the disconnection sweep sees it. */
  public record Running(String task, Instant slot, RunKind kind, int attempt, String node, long token) {}

  /** A task's flags. */
  public record Flags(boolean paused, Optional<Instant> triggeredAt) {}

  /** Registers a task (or updates its schedule's description). */
  public void register(Connection c, String namespace, String task, String schedule, String node)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + schema + ".scheduled_task"
        + " (namespace, name, schedule, updated_by) VALUES (?, ?, ?, ?)"
        + " ON CONFLICT (namespace, name) DO UPDATE SET schedule = excluded.schedule, updated_at = now(),"
        + " updated_by = excluded.updated_by WHERE scheduled_task.schedule IS DISTINCT FROM excluded.schedule")) {
      ps.setString(1, namespace);
      ps.setString(2, task);
      ps.setString(3, schedule);
      ps.setString(4, node);
      ps.executeUpdate();
    }
  }

  /** Fails with SQLSTATE 42P01 or 3F000 if the task tables are missing. */
  public void check(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + schema + ".task_run, " + schema
        + ".scheduled_task LIMIT 0"); ResultSet rs = ps.executeQuery()) {
      rs.next();
    }
  }

  /** When the task was first registered: the first slot of a fixed delay, the same for every node. */
  public Instant created(Connection c, String namespace, String task) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT created_at FROM " + schema + ".scheduled_task"
        + " WHERE namespace = ? AND name = ?")) {
      ps.setString(1, namespace);
      ps.setString(2, task);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException("task " + task + " vanished from " + schema + ".scheduled_task", "02000");
        }
        return rs.getTimestamp(1).toInstant();
      }
    }
  }

  /** The database's clock now. */
  public Instant now(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT clock_timestamp()"); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getTimestamp(1).toInstant();
    }
  }

  /** The task's latest scheduled or catch-up row, if any. */
  public Optional<Latest> latest(Connection c, String namespace, String task) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT slot, state, finished_at FROM " + schema + ".task_run"
        + " WHERE namespace = ? AND task = ? AND kind <> 'manual' ORDER BY slot DESC LIMIT 1")) {
      ps.setString(1, namespace);
      ps.setString(2, task);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(new Latest(rs.getTimestamp(1).toInstant(), state(rs.getString(2)),
            instant(rs.getTimestamp(3))));
      }
    }
  }

  /**
   * Inserts the slot's row as running, ours, if the slot has come by the database's clock and no
   * row exists: the one statement that makes a slot run at most once.
   */
  public Claimed claim(Connection c, String namespace, String task, Instant slot, RunKind kind, int attempt,
      String node, long token) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + schema + ".task_run"
        + " (namespace, task, slot, kind, state, attempt, node, fencing_token, started_at)"
        + " SELECT ?, ?, ?, ?, 'running', ?, ?, ?, now() FROM " + DURABLE + " WHERE ?::timestamptz <= now()"
        + " ON CONFLICT (namespace, task, slot) DO NOTHING RETURNING started_at")) {
      ps.setString(1, namespace);
      ps.setString(2, task);
      ps.setObject(3, at(slot));
      ps.setString(4, kind(kind));
      ps.setInt(5, attempt);
      ps.setString(6, node);
      ps.setLong(7, token);
      ps.setObject(8, at(slot));
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          return new Claimed(Claim.CLAIMED, rs.getTimestamp(1).toInstant());
        }
      }
    }
    return new Claimed(slotState(c, namespace, task, slot).isPresent() ? Claim.TAKEN : Claim.EARLY, null);
  }

  /** The slot's row's {@code started_at}, if the row exists and has one. */
  public Optional<Instant> startedAt(Connection c, String namespace, String task, Instant slot) throws SQLException {
    return slotColumn(c, "started_at", namespace, task, slot, rs -> instant(rs.getTimestamp(1)))
        .flatMap(started -> started);
  }

  /** The state of the slot's row, if there is one. */
  public Optional<RunState> slotState(Connection c, String namespace, String task, Instant slot) throws SQLException {
    return slotColumn(c, "state", namespace, task, slot, rs -> state(rs.getString(1)));
  }

  /** The fencing token in the slot's row, if the row exists (0 for a skipped slot). */
  public Optional<Long> slotToken(Connection c, String namespace, String task, Instant slot) throws SQLException {
    return slotColumn(c, "coalesce(fencing_token, 0)", namespace, task, slot, rs -> rs.getLong(1));
  }

  /** Reads one column (a fixed expression, never user input) of the slot's row, if the row exists. */
  private <T> Optional<T> slotColumn(Connection c, String column, String namespace, String task, Instant slot,
      Column<T> read) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT " + column + " FROM " + schema + ".task_run"
        + " WHERE namespace = ? AND task = ? AND slot = ?")) {
      ps.setString(1, namespace);
      ps.setString(2, task);
      ps.setObject(3, at(slot));
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(read.from(rs)) : Optional.empty();
      }
    }
  }

  /** Reads a value from the current row. */
  @FunctionalInterface
  private interface Column<T> {
    T from(ResultSet rs) throws SQLException;
  }


  /** What the task's running rows say to a node that finds the task's lock taken when it comes to a slot. */
  public enum Going {
    /** No run goes: the lock's holder is claiming a slot. */
    NONE,
    /** A run that started before the slot's time still goes: the slot came while it went (an overlap). */
    STARTED_BEFORE,
    /**
     * Only runs that started at or after the slot's time go: late runs of earlier slots (after an
     * outage, several slots fall due at once), which the slot did not come during; it waits for them.
     */
    STARTED_AFTER
  }

  /** Whether a run of the task is going now (as its row says), and whether one started before the slot. */
  public Going going(Connection c, String namespace, String task, Instant slot) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT count(*), coalesce(bool_or(started_at < ?), false) FROM "
        + schema + ".task_run WHERE namespace = ? AND task = ? AND state = 'running'")) {
      ps.setObject(1, at(slot));
      ps.setString(2, namespace);
      ps.setString(3, task);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) == 0 ? Going.NONE : rs.getBoolean(2) ? Going.STARTED_BEFORE : Going.STARTED_AFTER;
      }
    }
  }

  /** A run row by its slot and the fencing token of its attempt. */
  public record RunRef(Instant slot, long token) {}

  /** The task's running rows that started before the slot's time (the runs a slot came during, if they go). */
  public List<RunRef> runningBefore(Connection c, String namespace, String task, Instant slot) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT slot, coalesce(fencing_token, 0) FROM " + schema
        + ".task_run WHERE namespace = ? AND task = ? AND state = 'running' AND started_at < ?")) {
      ps.setString(1, namespace);
      ps.setString(2, task);
      ps.setObject(3, at(slot));
      List<RunRef> refs = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          refs.add(new RunRef(rs.getTimestamp(1).toInstant(), rs.getLong(2)));
        }
      }
      return refs;
    }
  }

  /**
   * A run as its row reads now: its start, and its end if the runner of that attempt recorded one
   * (not if the row still runs, was marked disconnected, or was taken over by another attempt).
   * Empty if the row is gone.
   */
  public Optional<SlotPlanner.OtherRun> otherRun(Connection c, String namespace, String task, RunRef run)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT started_at, finished_at, state, coalesce(fencing_token, 0)"
        + " FROM " + schema + ".task_run WHERE namespace = ? AND task = ? AND slot = ?")) {
      ps.setString(1, namespace);
      ps.setString(2, task);
      ps.setObject(3, at(run.slot()));
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next() || rs.getTimestamp(1) == null) {
          return Optional.empty();
        }
        Instant start = rs.getTimestamp(1).toInstant();
        RunState state = state(rs.getString(3));
        boolean recorded = rs.getLong(4) == run.token() && state != RunState.RUNNING
            && state != RunState.DISCONNECTED && rs.getTimestamp(2) != null;
        return Optional.of(new SlotPlanner.OtherRun(start,
            recorded ? Optional.of(rs.getTimestamp(2).toInstant()) : Optional.empty()));
      }
    }
  }

  /**
   * Records slots as skipped, unless a row exists, and only those at least their lateness in the
   * past by the database's clock (a node whose idea of the time is ahead cannot skip a slot that
   * has not been missed). Returns the slots that have a row now (recorded here or before): a slot
   * not among them has none and must be decided again. The slots travel as text: pgjdbc encodes
   * a {@code timestamptz[]} from {@code Timestamp}s in the JVM's zone.
   *
   * @param olderThan for each slot, how far in the past it must be
   */
  public java.util.Set<Instant> skip(Connection c, String namespace, String task, List<Instant> slots,
      List<Duration> olderThan, RunKind kind, String node, String detail) throws SQLException {
    java.util.Set<Instant> present = new java.util.HashSet<>();
    if (slots.isEmpty()) {
      return present;
    }
    try (PreparedStatement ps = c.prepareStatement("WITH want AS (SELECT CAST(t.s AS timestamptz) AS slot,"
        + " t.late FROM unnest(?::text[], ?::bigint[]) AS t(s, late)),"
        + " ins AS (INSERT INTO " + schema + ".task_run"
        + " (namespace, task, slot, kind, state, node, started_at, finished_at, detail)"
        + " SELECT ?, ?, w.slot, ?, 'skipped', ?, NULL, now(), ? FROM want w, " + DURABLE
        + " WHERE w.slot <= now() - w.late * interval '1 microsecond'"
        + " ON CONFLICT (namespace, task, slot) DO NOTHING RETURNING slot)"
        // the statement's snapshot does not see the rows it inserts: the union is both
        + " SELECT slot FROM ins UNION ALL SELECT r.slot FROM " + schema + ".task_run r JOIN want w ON r.slot = w.slot"
        + " WHERE r.namespace = ? AND r.task = ?")) {
      ps.setArray(1, c.createArrayOf("text", slots.stream().map(i -> micros(i).toString()).toArray()));
      ps.setArray(2, c.createArrayOf("bigint", olderThan.stream().map(d -> d.toNanos() / 1000).toArray()));
      ps.setString(3, namespace);
      ps.setString(4, task);
      ps.setString(5, kind(kind));
      ps.setString(6, node);
      ps.setString(7, detail);
      ps.setString(8, namespace);
      ps.setString(9, task);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          present.add(rs.getTimestamp(1).toInstant());
        }
      }
      return present;
    }
  }

  /** A slot as the database stores it: truncated to microseconds, in UTC. */
  static OffsetDateTime at(Instant slot) {
    return OffsetDateTime.ofInstant(micros(slot), ZoneOffset.UTC);
  }

  /** An instant truncated to microseconds, the database's precision. */
  public static Instant micros(Instant i) {
    return i.truncatedTo(ChronoUnit.MICROS);
  }

  /**
   * Ends our run: only if the row is still ours (same token) and running. Returns the row's
   * {@code finished_at} if it was, empty if not.
   */
  public Optional<Instant> finish(Connection c, String namespace, String task, Instant slot, long token, RunState state,
      String detail, Throwable error) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".task_run SET state = ?,"
        + " finished_at = now(), detail = COALESCE(?, detail), error_class = ?, error_message = ?, error_stack = ?"
        + " FROM " + DURABLE + " WHERE namespace = ? AND task = ? AND slot = ? AND fencing_token = ? AND state = 'running'"
        + " RETURNING finished_at")) {
      ps.setString(1, state.name().toLowerCase(Locale.ROOT));
      ps.setString(2, detail);
      ps.setString(3, error == null ? null : error.getClass().getName());
      ps.setString(4, error == null ? null : trim(String.valueOf(error.getMessage()), 2000));
      ps.setString(5, error == null ? null : io.pglock.internal.util.Stacks.trimmed(error));
      ps.setString(6, namespace);
      ps.setString(7, task);
      ps.setObject(8, at(slot));
      ps.setLong(9, token);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? instant(rs.getTimestamp(1)) : Optional.empty();
      }
    }
  }

  /** The running rows of these tasks. */
  public List<Running> running(Connection c, String namespace, List<String> tasks) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT task, slot, kind, attempt, node, fencing_token FROM "
        + schema + ".task_run WHERE namespace = ? AND state = 'running' AND task = ANY (?)")) {
      ps.setString(1, namespace);
      ps.setArray(2, c.createArrayOf("text", tasks.toArray()));
      List<Running> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(new Running(rs.getString(1), rs.getTimestamp(2).toInstant(), kind(rs.getString(3)), rs.getInt(4),
              rs.getString(5), rs.getLong(6)));
        }
      }
      return rows;
    }
  }

  /** Marks a run whose runner is gone as disconnected (no retry). Returns whether the row was still that run. */
  public boolean disconnected(Connection c, String namespace, Running run, String noticedBy) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".task_run SET state = 'disconnected',"
        + " noticed_at = now(), finished_at = now(), detail = ? FROM " + DURABLE
        + " WHERE namespace = ? AND task = ? AND slot = ? AND fencing_token = ? AND state = 'running'")) {
      ps.setString(1, "runner " + run.node() + " (attempt " + run.attempt() + ") disconnected; noticed by " + noticedBy);
      ps.setString(2, namespace);
      ps.setString(3, run.task());
      ps.setObject(4, at(run.slot()));
      ps.setLong(5, run.token());
      return ps.executeUpdate() == 1;
    }
  }

  /**
   * Takes over a run whose runner is gone, as its next attempt. Returns the new attempt's
   * {@code started_at} if the row was still that run, empty if not.
   */
  public Optional<Instant> retry(Connection c, String namespace, Running run, String node, long token) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".task_run SET attempt = attempt + 1,"
        + " node = ?, fencing_token = ?, started_at = now(), noticed_at = now(), detail = ? FROM " + DURABLE
        + " WHERE namespace = ? AND task = ? AND slot = ? AND fencing_token = ? AND state = 'running'"
        + " RETURNING started_at")) {
      ps.setString(1, node);
      ps.setLong(2, token);
      ps.setString(3, "attempt " + run.attempt() + " by " + run.node() + " disconnected; retried by " + node);
      ps.setString(4, namespace);
      ps.setString(5, run.task());
      ps.setObject(6, at(run.slot()));
      ps.setLong(7, run.token());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? instant(rs.getTimestamp(1)) : Optional.empty();
      }
    }
  }

  /** Notes the next scheduled slot for operators. */
  public void nextSlot(Connection c, String namespace, String task, Instant next) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".scheduled_task SET next_slot = ?"
        + " WHERE namespace = ? AND name = ? AND next_slot IS DISTINCT FROM ?")) {
      ps.setObject(1, next == null ? null : at(next), Types.TIMESTAMP_WITH_TIMEZONE);
      ps.setString(2, namespace);
      ps.setString(3, task);
      ps.setObject(4, next == null ? null : at(next), Types.TIMESTAMP_WITH_TIMEZONE);
      ps.executeUpdate();
    }
  }

  /** The flags of these tasks, by name. */
  public Map<String, Flags> flags(Connection c, String namespace, List<String> tasks) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT name, paused, triggered_at FROM " + schema
        + ".scheduled_task WHERE namespace = ? AND name = ANY (?)")) {
      ps.setString(1, namespace);
      ps.setArray(2, c.createArrayOf("text", tasks.toArray()));
      Map<String, Flags> flags = new LinkedHashMap<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          flags.put(rs.getString(1), new Flags(rs.getBoolean(2), instant(rs.getTimestamp(3))));
        }
      }
      return flags;
    }
  }

  /** Takes a manual trigger: true for the one node whose update cleared it. */
  public boolean takeTrigger(Connection c, String namespace, String task, Instant at) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".scheduled_task SET triggered_at = NULL"
        + " WHERE namespace = ? AND name = ? AND triggered_at = ?")) {
      ps.setString(1, namespace);
      ps.setString(2, task);
      ps.setObject(3, at(at));
      return ps.executeUpdate() == 1;
    }
  }

  /** Pauses or resumes; false if the task is unknown. */
  public boolean setPaused(Connection c, String namespace, String task, boolean paused, String by)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".scheduled_task SET paused = ?,"
        + " updated_at = now(), updated_by = ? WHERE namespace = ? AND name = ?")) {
      ps.setBoolean(1, paused);
      ps.setString(2, by);
      ps.setString(3, namespace);
      ps.setString(4, task);
      return ps.executeUpdate() == 1;
    }
  }

  /** Requests a manual run; false if the task is unknown. */
  public boolean trigger(Connection c, String namespace, String task, String by) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".scheduled_task SET"
        + " triggered_at = clock_timestamp(), updated_at = now(), updated_by = ? WHERE namespace = ? AND name = ?")) {
      ps.setString(1, by);
      ps.setString(2, namespace);
      ps.setString(3, task);
      return ps.executeUpdate() == 1;
    }
  }

  /** Deletes up to {@code limit} finished rows older than the retention; returns how many. */
  public int prune(Connection c, String namespace, Duration retention, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + schema + ".task_run WHERE ctid = ANY (ARRAY("
        + "SELECT r.ctid FROM " + schema + ".task_run r WHERE r.namespace = ? AND r.finished_at < now() - ?::interval"
        // the newest row of a task says where its schedule is (a fixed delay's last end, the last
        // slot to catch up from): it stays whatever its age
        + " AND r.slot < (SELECT max(n.slot) FROM " + schema + ".task_run n WHERE n.namespace = r.namespace"
        + " AND n.task = r.task AND n.kind <> 'manual') LIMIT ?))")) {
      ps.setString(1, namespace);
      ps.setString(2, retention.toMillis() + " milliseconds");
      ps.setInt(3, limit);
      return ps.executeUpdate();
    }
  }

  /** Every task of the namespace with its latest runs, by name. */
  public List<TaskStatus> statuses(Connection c, String namespace, int runsPerTask) throws SQLException {
    List<TaskStatus> tasks = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement("SELECT name, schedule, paused, triggered_at, next_slot,"
        + " updated_at, updated_by FROM " + schema + ".scheduled_task WHERE namespace = ? ORDER BY name")) {
      ps.setString(1, namespace);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          tasks.add(new TaskStatus(rs.getString(1), rs.getString(2), rs.getBoolean(3), instant(rs.getTimestamp(4)),
              instant(rs.getTimestamp(5)), rs.getTimestamp(6).toInstant(), Optional.ofNullable(rs.getString(7)),
              List.of()));
        }
      }
    }
    List<TaskStatus> withRuns = new ArrayList<>();
    for (TaskStatus t : tasks) {
      withRuns.add(new TaskStatus(t.name(), t.schedule(), t.paused(), t.triggeredAt(), t.nextSlot(), t.updatedAt(),
          t.updatedBy(), runs(c, namespace, t.name(), runsPerTask)));
    }
    return withRuns;
  }

  /** A task's latest runs, newest first. */
  public List<TaskRun> runs(Connection c, String namespace, String task, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT task, slot, kind, state, attempt, node, fencing_token,"
        + " started_at, finished_at, noticed_at, detail, error_class, error_message, error_stack FROM " + schema
        + ".task_run WHERE namespace = ? AND task = ? ORDER BY slot DESC LIMIT ?")) {
      ps.setString(1, namespace);
      ps.setString(2, task);
      ps.setInt(3, limit);
      List<TaskRun> runs = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          runs.add(new TaskRun(rs.getString(1), rs.getTimestamp(2).toInstant(), kind(rs.getString(3)),
              state(rs.getString(4)), rs.getInt(5), Optional.ofNullable(rs.getString(6)), rs.getLong(7),
              instant(rs.getTimestamp(8)), instant(rs.getTimestamp(9)), instant(rs.getTimestamp(10)),
              Optional.ofNullable(rs.getString(11)), Optional.ofNullable(rs.getString(12)),
              Optional.ofNullable(rs.getString(13)), Optional.ofNullable(rs.getString(14))));
        }
      }
      return runs;
    }
  }

  private static Optional<Instant> instant(Timestamp t) {
    return t == null ? Optional.empty() : Optional.of(t.toInstant());
  }

  private static RunState state(String s) {
    return RunState.valueOf(s.toUpperCase(Locale.ROOT));
  }

  private static String kind(RunKind k) {
    return k.name().toLowerCase(Locale.ROOT);
  }

  private static RunKind kind(String s) {
    return RunKind.valueOf(s.toUpperCase(Locale.ROOT));
  }

  static String trim(String s, int max) {
    return io.pglock.internal.util.Stacks.trim(s, max);
  }
}
