package io.pglock.queue.internal;

import io.pglock.internal.schema.SchemaMigrator;
import io.pglock.queue.Job;
import io.pglock.queue.JobAdmin;
import io.pglock.queue.JobError;
import io.pglock.queue.JobQueueException;
import io.pglock.queue.JobState;
import io.pglock.queue.QueueCounts;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/** {@link JobAdmin} on a plain DataSource: one short statement per call, bounded by a network timeout. */
public final class DefaultJobAdmin implements JobAdmin {
  /** The head of a cancel notification's payload: {@code "cancel <id>"}. */
  static final String CANCEL = "\u0001cancel"; // a control character: no queue name looks like it
  private static final int DEFAULT_TIMEOUT_MILLIS = 10_000;

  private final DataSource dataSource;
  private final String schema;
  private final String channel;
  private final int timeoutMillis;
  private final String columns;

  DefaultJobAdmin(DataSource dataSource, String schema, String channel, int timeoutMillis) {
    this.dataSource = dataSource;
    this.schema = schema;
    this.channel = channel;
    this.timeoutMillis = timeoutMillis;
    // the errors come out as parallel arrays, so that reading them needs no JSON library
    this.columns = "id, queue, kind, payload::text, priority, run_at, state, attempt, max_attempts, unique_key,"
        + " concurrency_key, node, cancel_requested_at IS NOT NULL, created_at, started_at, finished_at,"
        + " ARRAY(SELECT e->>'attempt' FROM jsonb_array_elements(errors) e),"
        + " ARRAY(SELECT e->>'at' FROM jsonb_array_elements(errors) e),"
        + " ARRAY(SELECT e->>'node' FROM jsonb_array_elements(errors) e),"
        + " ARRAY(SELECT e->>'class' FROM jsonb_array_elements(errors) e),"
        + " ARRAY(SELECT e->>'message' FROM jsonb_array_elements(errors) e),"
        + " ARRAY(SELECT e->>'stack' FROM jsonb_array_elements(errors) e)";
  }

  /** The admin of {@link JobAdmin#of}. */
  public static JobAdmin create(DataSource dataSource, String schema) {
    String checked = SchemaMigrator.checkSchema(schema);
    return new DefaultJobAdmin(java.util.Objects.requireNonNull(dataSource, "dataSource"), checked,
        DefaultJobQueue.channel(checked), DEFAULT_TIMEOUT_MILLIS);
  }

  private <T> T call(String what, ShortCall.Work<T> call) {
    try {
      return ShortCall.run(dataSource, timeoutMillis, call);
    } catch (SQLException e) {
      if ("42P01".equals(e.getSQLState()) || "3F000".equals(e.getSQLState())) {
        throw new io.pglock.SchemaMissingException("the job table " + schema + ".job is missing: run "
            + "PgLockSchema.migrate(dataSource, \"" + schema + "\") (schema version 9 or later)");
      }
      throw new JobQueueException("could not " + what + ": " + e.getMessage() + " (SQLSTATE " + e.getSQLState() + ")",
          e);
    }
  }

  @Override
  public Optional<Job> job(long id) {
    return call("read job " + id, c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT " + columns + " FROM " + schema + ".job WHERE id = ?")) {
        ps.setLong(1, id);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? Optional.of(read(rs)) : Optional.empty();
        }
      }
    });
  }

  @Override
  public List<QueueCounts> counts() {
    return call("count jobs", c -> {
      Map<String, Map<JobState, Long>> counts = new LinkedHashMap<>();
      Map<String, Duration> oldest = new LinkedHashMap<>();
      try (PreparedStatement ps = c.prepareStatement("SELECT queue, state, count(*),"
          + " extract(epoch FROM now() - min(run_at) FILTER (WHERE state IN ('available', 'retryable')"
          + "   AND run_at <= now())) * 1000"
          + " FROM " + schema + ".job GROUP BY queue, state ORDER BY queue, state")) {
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            String queue = rs.getString(1);
            counts.computeIfAbsent(queue, q -> new EnumMap<>(JobState.class))
                .put(JobState.ofDb(rs.getString(2)), rs.getLong(3));
            double ms = rs.getDouble(4);
            if (!rs.wasNull()) {
              Duration age = Duration.ofMillis((long) ms);
              oldest.merge(queue, age, (a, b) -> a.compareTo(b) >= 0 ? a : b);
            }
          }
        }
      }
      List<QueueCounts> result = new ArrayList<>();
      counts.forEach((queue, byState) -> result.add(new QueueCounts(queue, Map.copyOf(byState), oldest.get(queue))));
      return result;
    });
  }

  @Override
  public List<Job> list(JobState state, String queue, int limit) {
    java.util.Objects.requireNonNull(state, "state");
    if (limit < 1 || limit > 10_000) {
      throw new IllegalArgumentException("limit must be between 1 and 10000, got " + limit);
    }
    return call("list " + state.dbValue() + " jobs", c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT " + columns + " FROM " + schema + ".job"
          + " WHERE state = ? AND (?::text IS NULL OR queue = ?) ORDER BY id DESC LIMIT ?")) {
        ps.setString(1, state.dbValue());
        ps.setString(2, queue);
        ps.setString(3, queue);
        ps.setInt(4, limit);
        List<Job> jobs = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            jobs.add(read(rs));
          }
        }
        return jobs;
      }
    });
  }

  @Override
  public boolean cancel(long id) {
    return call("cancel job " + id, c -> {
      // one statement: an available job is cancelled, a running one is asked to stop (and its worker
      // hears of it at once by NOTIFY, or at its next heartbeat)
      try (PreparedStatement ps = c.prepareStatement("WITH now_cancelled AS ("
          + " UPDATE " + schema + ".job SET state = 'cancelled', finished_at = now()"
          + " WHERE id = ? AND state IN ('available', 'retryable') RETURNING id),"
          + " asked AS (UPDATE " + schema + ".job SET cancel_requested_at = now()"
          + " WHERE id = ? AND state = 'running' RETURNING id)"
          + " SELECT (SELECT count(*) FROM now_cancelled), (SELECT count(pg_notify(?, ? || ' ' || id)) FROM asked)")) {
        ps.setLong(1, id);
        ps.setLong(2, id);
        ps.setString(3, channel);
        ps.setString(4, CANCEL);
        // A job claimed while this statement ran is 'running' only after the statement's snapshot:
        // both updates then miss it. The next try (a new snapshot) sees it running.
        for (int tries = 0; tries < 3; tries++) {
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            if (rs.getLong(1) + rs.getLong(2) > 0) {
              return true;
            }
          }
          if (!unfinished(c, id)) {
            return false;
          }
        }
        return false;
      }
    });
  }

  private boolean unfinished(Connection c, long id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + schema + ".job WHERE id = ?"
        + " AND state IN ('available', 'retryable', 'running')")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  @Override
  public boolean retry(long id) {
    return call("retry job " + id, c -> {
      try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".job SET state = 'available',"
          + " run_at = now(), finished_at = NULL, cancel_requested_at = NULL,"
          + " max_attempts = CASE WHEN max_attempts IS NOT NULL AND attempt >= max_attempts THEN attempt + 1"
          + "   ELSE max_attempts END"
          + " WHERE id = ? AND state IN ('discarded', 'cancelled') RETURNING id, pg_notify(?, queue || ' 0 0')")) {
        ps.setLong(1, id);
        ps.setString(2, channel);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next();
        }
      } catch (SQLException e) {
        if ("23505".equals(e.getSQLState())) {
          throw new JobQueueException("could not retry job " + id + ": an unfinished job holds its unique key; wait "
              + "for that one to finish, or cancel it first", e);
        }
        throw e;
      }
    });
  }

  @Override
  public boolean discard(long id) {
    return call("discard job " + id, c -> update(c, "UPDATE " + schema + ".job SET state = 'discarded',"
        + " finished_at = now() WHERE id = ? AND state IN ('available', 'retryable')", id));
  }

  @Override
  public boolean delete(long id) {
    return call("delete job " + id, c -> update(c, "DELETE FROM " + schema + ".job"
        + " WHERE id = ? AND state IN ('succeeded', 'discarded', 'cancelled')", id));
  }

  private static boolean update(Connection c, String sql, long id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, id);
      return ps.executeUpdate() > 0;
    }
  }

  private static Job read(ResultSet rs) throws SQLException {
    int maxAttempts = rs.getInt(9);
    Integer max = rs.wasNull() ? null : maxAttempts;
    String[] attempts = strings(rs.getArray(17));
    String[] at = strings(rs.getArray(18));
    String[] node = strings(rs.getArray(19));
    String[] cls = strings(rs.getArray(20));
    String[] msg = strings(rs.getArray(21));
    String[] stack = strings(rs.getArray(22));
    List<JobError> errors = new ArrayList<>(attempts.length);
    for (int i = 0; i < attempts.length; i++) {
      errors.add(new JobError(attempts[i] == null ? 0 : Integer.parseInt(attempts[i]),
          at[i] == null ? null : OffsetDateTime.parse(at[i]).toInstant(), node[i], cls[i], msg[i], stack[i]));
    }
    return new Job(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getInt(5), instant(rs, 6),
        JobState.ofDb(rs.getString(7)), rs.getInt(8), max, rs.getString(10), rs.getString(11), rs.getString(12),
        rs.getBoolean(13), List.copyOf(errors), instant(rs, 14), instant(rs, 15), instant(rs, 16));
  }

  private static String[] strings(Array a) throws SQLException {
    return a == null ? new String[0] : (String[]) a.getArray();
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    Timestamp t = rs.getTimestamp(column);
    return t == null ? null : t.toInstant();
  }
}
