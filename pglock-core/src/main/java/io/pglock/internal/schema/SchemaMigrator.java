package io.pglock.internal.schema;

import io.pglock.LockKey;
import io.pglock.LockSessionException;
import io.pglock.MissingPrivilegeException;
import io.pglock.internal.SessionSetup;
import io.pglock.internal.SqlErrors;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/** Applies the numbered migrations under {@code io/pglock/schema/} in one transaction, under a lock. */
public final class SchemaMigrator {
  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
  private static final List<String> MIGRATIONS = List.of("V1__key_function.sql", "V2__fencing_tokens.sql", "V3__lock_names_and_view.sql",
      "V4__lock_history.sql", "V5__fencing_sequence.sql",
      "V6__locks_view_holder_namespace.sql", "V7__fencing_fast_path.sql", "V8__scheduled_tasks.sql",
      "V9__job_queue.sql", "V10__lock_name_retention.sql", "V11__job_trace_context.sql",
      "V12__dashboard.sql", "V13__sql_api.sql", "V14__failover_quarantine.sql", "V15__job_prune_index.sql");
  /** Serialises migrations of every node: a transaction lock on this key. */
  private static final long MIGRATION_LOCK = LockKey.named("pglock", "schema-migration").int64();

  private SchemaMigrator() {}

  public static int latestVersion() {
    return MIGRATIONS.size();
  }

  /** See {@link io.pglock.PgLockSchema#migrate}. */
  public static int migrate(DataSource dataSource, String schema) {
    checkSchema(schema);
    try (Connection c = dataSource.getConnection()) {
      SessionSetup.checkPostgres(c);
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
          ps.setLong(1, MIGRATION_LOCK);
          ps.execute();
        }
        int version = currentVersion(c, schema);
        for (int v = version + 1; v <= MIGRATIONS.size(); v++) {
          apply(c, schema, v);
        }
        c.commit();
        return MIGRATIONS.size();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(autoCommit);
      }
    } catch (SQLException e) {
      if (SqlErrors.state(e).equals(SqlErrors.INSUFFICIENT_PRIVILEGE)) {
        throw new MissingPrivilegeException("the database role may not create pglock's schema \"" + schema
            + "\" (" + SqlErrors.describe(e) + "); as an administrator run CREATE SCHEMA " + schema
            + " AUTHORIZATION <role>, or GRANT CREATE ON DATABASE <db> TO <role>, or apply the files under "
            + "io/pglock/schema/ with Flyway or Liquibase", e);
      }
      throw new LockSessionException("migrating pglock's schema \"" + schema + "\" failed: "
          + SqlErrors.describe(e), e);
    }
  }

  /**
   * Checks a schema name before it is used in SQL text.
   *
   * @param schema the name
   * @return the name, if it is a lower-case SQL identifier
   * @throws IllegalArgumentException if it is not
   */
  public static String checkSchema(String schema) {
    if (schema == null || !IDENTIFIER.matcher(schema).matches()) {
      throw new IllegalArgumentException("schema must be a lower-case SQL identifier (letters, digits, '_', "
          + "not starting with a digit, at most 63 characters): \"" + schema + "\"");
    }
    return schema;
  }

  private static int currentVersion(Connection c, String schema) throws SQLException {
    // Look before creating: CREATE ... IF NOT EXISTS checks the CREATE privilege even when the object
    // exists, and a role whose schema an administrator made needs only USAGE and SELECT here.
    try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
      ps.setString(1, schema + ".schema_version");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (!rs.getBoolean(1)) {
          createVersionTable(c, schema);
        }
      }
    }
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT coalesce(max(version), 0) FROM " + schema + ".schema_version")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static void createVersionTable(Connection c, String schema) throws SQLException {
    boolean exists;
    try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_namespace WHERE nspname = ?")) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        exists = rs.getInt(1) > 0;
      }
    }
    try (Statement st = c.createStatement()) {
      // The schema name is a validated identifier: it cannot carry SQL.
      if (!exists) {
        st.execute("CREATE SCHEMA " + schema);
      }
      st.execute("CREATE TABLE " + schema + ".schema_version ("
          + "version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
    }
  }

  private static void apply(Connection c, String schema, int version) throws SQLException {
    String sql = resource(MIGRATIONS.get(version - 1)).replace("${schema}", schema);
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + schema + ".schema_version(version) VALUES (?)")) {
      ps.setInt(1, version);
      ps.execute();
    }
  }

  private static String resource(String file) {
    try (InputStream in = SchemaMigrator.class.getResourceAsStream("/io/pglock/schema/" + file)) {
      if (in == null) {
        throw new IllegalStateException("migration " + file + " is missing from the classpath");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
