package io.pglock.spring.boot;

import io.pglock.PgLockSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.Configuration;

/**
 * Applies pglock's migrations through Flyway, for an application that migrates with Flyway: with
 * the application's Flyway settings (its DataSource, so its user and password), pglock's files
 * (classpath {@code io/pglock/schema}, the {@code ${schema}} placeholder), a history table of their
 * own in pglock's schema ({@code flyway_pglock_history}: pglock's version numbers do not mix with
 * the application's), then the versions recorded in {@code schema_version} as pglock's own migrator
 * records them, so that nodes with and without Flyway agree. A schema migrated before by pglock's
 * migrator is taken over as a baseline at its version.
 */
final class FlywaySchemaMigration {
  /** The history table in pglock's schema. */
  static final String HISTORY_TABLE = "flyway_pglock_history";

  private FlywaySchemaMigration() {}

  /**
   * Migrates.
   *
   * @param applicationFlyway the application's Flyway, whose settings are used
   * @param schema pglock's schema, a validated identifier
   * @return the schema's version afterwards
   */
  static int migrate(Flyway applicationFlyway, String schema) {
    Configuration app = applicationFlyway.getConfiguration();
    DataSource dataSource = app.getDataSource();
    try {
      int before = pglockVersion(dataSource, schema);
      Flyway.configure(FlywaySchemaMigration.class.getClassLoader())
          .dataSource(dataSource)
          .schemas(schema)
          .defaultSchema(schema)
          .table(HISTORY_TABLE)
          .locations("classpath:io/pglock/schema")
          .placeholders(Map.of("schema", schema))
          .baselineOnMigrate(before > 0)
          .baselineVersion(String.valueOf(Math.max(before, 1)))
          .baselineDescription("applied by the pglock migrator") // no quote: Flyway puts it in SQL text
          .connectRetries(app.getConnectRetries())
          .load()
          .migrate();
      recordVersions(dataSource, schema);
      return PgLockSchema.latestVersion();
    } catch (SQLException e) {
      throw new IllegalStateException("recording pglock's schema version after Flyway failed: " + e.getMessage(), e);
    }
  }

  private static int pglockVersion(DataSource dataSource, String schema) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
      ps.setString(1, schema + ".schema_version");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (!rs.getBoolean(1)) {
          return 0;
        }
      }
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT coalesce(max(version), 0) FROM " + schema + ".schema_version")) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static void recordVersions(DataSource dataSource, String schema) throws SQLException {
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      // the schema name is a validated identifier: it cannot carry SQL
      st.execute("CREATE TABLE IF NOT EXISTS " + schema + ".schema_version ("
          + "version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + schema + ".schema_version(version) "
          + "SELECT v FROM generate_series(1, ?) v ON CONFLICT (version) DO NOTHING")) {
        ps.setInt(1, PgLockSchema.latestVersion());
        ps.execute();
      }
    }
  }
}
