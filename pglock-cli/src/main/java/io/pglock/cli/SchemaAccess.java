package io.pglock.cli;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Whether the role may use pglock's schema, asked after the library reported the schema missing:
 * the library cannot tell a schema that is not there from one the role may not use, and the two
 * need different fixes (a migration, a GRANT) and exit codes (5, 6).
 */
final class SchemaAccess {
  private SchemaAccess() {}

  /**
   * The GRANT to run if the schema exists and the connecting role lacks USAGE on it.
   *
   * @return the GRANT statement, or empty if the schema is missing, usable, or the question failed
   */
  static Optional<String> missingUsage(DataSource dataSource, String schema) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT current_user, NOT has_schema_privilege(n.oid, 'USAGE')"
            + " FROM pg_namespace n WHERE n.nspname = ?")) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next() && rs.getBoolean(2)) {
          return Optional.of("GRANT USAGE ON SCHEMA " + ErrorReport.quoted(schema) + " TO "
              + ErrorReport.quoted(rs.getString(1)));
        }
      }
    } catch (SQLException e) {
      // The library's report stands.
    }
    return Optional.empty();
  }
}
