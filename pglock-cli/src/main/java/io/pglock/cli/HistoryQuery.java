package io.pglock.cli;

import io.pglock.LockSessionException;
import io.pglock.MissingPrivilegeException;
import io.pglock.SchemaMissingException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Reads the lock history, the view {@code <schema>.history} (schema version 4,
 * {@code V4__lock_history.sql}), for {@code pglock history}. The library writes the history but has
 * no API to read it; the view is the documented interface for SQL users, and this is one of them.
 *
 * <p>The view is not granted to {@code PUBLIC} (error messages and stacks may carry data), so before
 * reading it checks, from the catalogs any role may read, that the view is there and that the role
 * may read it, and names the missing GRANT if not. One connection per call; not thread-safe.
 */
final class HistoryQuery {
  private static final String INSUFFICIENT_PRIVILEGE = "42501";
  private static final String ACCESS = """
      SELECT c.oid IS NOT NULL AS has_view,
             coalesce(has_schema_privilege(n.oid, 'USAGE'), false) AS has_usage,
             c.oid IS NOT NULL AND has_table_privilege(c.oid, 'SELECT') AS has_select,
             quote_ident(current_user) AS role
        FROM (SELECT 1) one
        LEFT JOIN pg_namespace n ON n.nspname = ?
        LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = 'history'
      """;

  /** One hold, as listed: everything but the stack. */
  record Hold(long id, String namespace, String name, String node, int pid, Instant acquiredAt,
      Optional<Duration> heldFor, String outcome, Optional<String> lossCause, Optional<String> errorClass,
      Optional<String> errorMessage) {}

  /** Which holds to list, newest first. */
  record Filter(Optional<String> namespace, Optional<NameGlob> name, boolean failedOnly, Optional<Duration> since,
      int limit) {}

  private final DataSource dataSource;
  private final String schema;

  /** A query of {@code <schema>.history}; the schema is a checked lower-case identifier. */
  HistoryQuery(DataSource dataSource, String schema) {
    this.dataSource = dataSource;
    this.schema = schema;
  }

  /**
   * The holds the filter selects, newest first.
   *
   * @throws SchemaMissingException if the schema lacks the view
   * @throws MissingPrivilegeException if the role may not read it, naming the GRANT
   * @throws LockSessionException if the database cannot be reached or the query fails
   */
  List<Hold> holds(Filter filter) {
    StringBuilder sql = new StringBuilder("SELECT id, namespace, name, node, pid, acquired_at, "
        + "EXTRACT(EPOCH FROM held_for) AS held_seconds, outcome, loss_cause, error_class, error_message FROM "
        + schema + ".history WHERE true");
    List<Object> values = new ArrayList<>();
    filter.namespace().ifPresent(ns -> {
      sql.append(" AND namespace = ?");
      values.add(ns);
    });
    filter.name().ifPresent(glob -> {
      sql.append(" AND name LIKE ? ESCAPE '\\'");
      values.add(glob.like());
    });
    if (filter.failedOnly()) {
      // As written in the partial index lock_history_failed, so that the planner can use it.
      sql.append(" AND outcome IN ('failed', 'lost', 'disconnected')");
    }
    filter.since().ifPresent(d -> {
      sql.append(" AND acquired_at >= now() - make_interval(secs => ?)");
      values.add(d.toMillis() / 1000.0);
    });
    sql.append(" ORDER BY acquired_at DESC, id DESC LIMIT ?");
    values.add(filter.limit());
    return read(sql.toString(), values, rs -> {
      List<Hold> holds = new ArrayList<>();
      while (rs.next()) {
        holds.add(hold(rs));
      }
      return holds;
    });
  }

  /**
   * One hold with its error stack, if the history has it.
   *
   * <p>Throws as {@link #holds} does.
   */
  Optional<HoldWithStack> hold(long id) {
    String sql = "SELECT id, namespace, name, node, pid, acquired_at, EXTRACT(EPOCH FROM held_for) AS held_seconds, "
        + "outcome, loss_cause, error_class, error_message, error_stack FROM " + schema + ".history WHERE id = ?";
    return read(sql, List.of(id), rs -> rs.next()
        ? Optional.of(new HoldWithStack(hold(rs), Optional.ofNullable(rs.getString("error_stack"))))
        : Optional.empty());
  }

  /** A hold and the stack of the exception its work failed with. */
  record HoldWithStack(Hold hold, Optional<String> stack) {}

  private interface Rows<T> {
    T read(ResultSet rs) throws SQLException;
  }

  private <T> T read(String sql, List<Object> values, Rows<T> rows) {
    try (Connection c = dataSource.getConnection()) {
      checkAccess(c);
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int i = 0; i < values.size(); i++) {
          ps.setObject(i + 1, values.get(i));
        }
        try (ResultSet rs = ps.executeQuery()) {
          return rows.read(rs);
        }
      } catch (SQLException e) {
        if (INSUFFICIENT_PRIVILEGE.equals(e.getSQLState())) {
          throw missingPrivilege(c.getMetaData().getUserName(), true);
        }
        throw e;
      }
    } catch (SQLException e) {
      throw new LockSessionException("could not read " + schema + ".history: SQLSTATE " + e.getSQLState() + ": "
          + e.getMessage(), e);
    }
  }

  private void checkAccess(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ACCESS)) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (!rs.getBoolean("has_view")) {
          throw new SchemaMissingException("the view " + schema + ".history is missing: it needs pglock's schema \""
              + schema + "\" at version 4 or later; run PgLockSchema.migrate(dataSource, \"" + schema + "\") once, "
              + "or apply io/pglock/schema/V4__lock_history.sql with Flyway or Liquibase");
        }
        if (!rs.getBoolean("has_usage") || !rs.getBoolean("has_select")) {
          throw missingPrivilege(rs.getString("role"), !rs.getBoolean("has_usage"));
        }
      }
    }
  }

  private MissingPrivilegeException missingPrivilege(String role, boolean withUsage) {
    // One line with the fix, and no server error under it: the view is deliberately not granted to PUBLIC.
    return new MissingPrivilegeException("role " + role + " may not read " + schema + ".history (SQLSTATE "
        + INSUFFICIENT_PRIVILEGE + "); as the schema's owner or a superuser, run: "
        + (withUsage ? "GRANT USAGE ON SCHEMA " + schema + " TO " + role + "; " : "")
        + "GRANT SELECT ON " + schema + ".history TO " + role + ";", null);
  }

  private static Hold hold(ResultSet rs) throws SQLException {
    Timestamp acquired = rs.getTimestamp("acquired_at");
    double heldSeconds = rs.getDouble("held_seconds");
    Optional<Duration> heldFor = rs.wasNull() ? Optional.empty()
        : Optional.of(Duration.ofNanos(Math.round(heldSeconds * 1_000_000_000L)));
    return new Hold(rs.getLong("id"), rs.getString("namespace"), rs.getString("name"), rs.getString("node"),
        rs.getInt("pid"), acquired.toInstant(), heldFor, rs.getString("outcome"),
        Optional.ofNullable(rs.getString("loss_cause")), Optional.ofNullable(rs.getString("error_class")),
        Optional.ofNullable(rs.getString("error_message")));
  }
}
