package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.PgLockSchema;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * One rule for a missing privilege in every command: exit code 6 and the GRANT to run. Three roles,
 * made for this test and dropped after it: one without CONNECT on the database, one without USAGE
 * on pglock's schema, one without privileges on pglock's tables. Before, {@code locks} exited 3
 * with the raw FATAL, {@code tasks} 3 ("could not be reached") and {@code jobs} 6 with a raw
 * "permission denied ... Position".
 */
class PrivilegeExitCodeTest {
  private static final String SUFFIX = UUID.randomUUID().toString().substring(0, 8);
  private static final String NO_CONNECT = "pglock_cli_noconnect_" + SUFFIX;
  private static final String NO_USAGE = "pglock_cli_nousage_" + SUFFIX;
  private static final String NO_TABLES = "pglock_cli_notables_" + SUFFIX;
  private static String database;
  private static boolean publicCouldConnect;

  @BeforeAll
  static void createRoles() throws SQLException {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
    try (Connection admin = TestDatabase.get().connect()) {
      assumeTrue(bool(admin, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"),
          "needs a superuser to create roles and revoke CONNECT");
      database = string(admin, "SELECT current_database()");
      publicCouldConnect = bool(admin, "SELECT has_database_privilege('public', current_database(), 'CONNECT')");
      for (String role : List.of(NO_CONNECT, NO_USAGE, NO_TABLES)) {
        execute(admin, "CREATE ROLE " + role + " LOGIN");
      }
      // CONNECT is PUBLIC's by default: take it from PUBLIC, give it back by name to everyone else here.
      execute(admin, "GRANT CONNECT ON DATABASE " + ErrorReport.quoted(database) + " TO CURRENT_USER, " + NO_USAGE
          + ", " + NO_TABLES);
      execute(admin, "REVOKE CONNECT ON DATABASE " + ErrorReport.quoted(database) + " FROM PUBLIC");
      execute(admin, "GRANT USAGE ON SCHEMA pglock TO " + NO_TABLES);
    }
  }

  @AfterAll
  static void dropRoles() throws SQLException {
    if (database == null) {
      return;
    }
    try (Connection admin = TestDatabase.get().connect()) {
      if (publicCouldConnect) {
        execute(admin, "GRANT CONNECT ON DATABASE " + ErrorReport.quoted(database) + " TO PUBLIC");
      }
      for (String role : List.of(NO_CONNECT, NO_USAGE, NO_TABLES)) {
        execute(admin, "DROP OWNED BY " + role);
        execute(admin, "DROP ROLE " + role);
      }
    }
  }

  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource(delimiter = '|', value = {
      "noconnect | locks                                 | GRANT CONNECT ON DATABASE",
      "noconnect | history                               | GRANT CONNECT ON DATABASE",
      "noconnect | leader x                              | GRANT CONNECT ON DATABASE",
      "noconnect | members x                             | GRANT CONNECT ON DATABASE",
      "noconnect | tasks                                 | GRANT CONNECT ON DATABASE",
      "noconnect | tasks trigger t                       | GRANT CONNECT ON DATABASE",
      "noconnect | jobs                                  | GRANT CONNECT ON DATABASE",
      "noconnect | jobs retry 1                          | GRANT CONNECT ON DATABASE",
      "noconnect | run --name x -- true                  | GRANT CONNECT ON DATABASE",
      "nousage   | locks                                 | GRANT USAGE ON SCHEMA pglock",
      "nousage   | history                               | GRANT USAGE ON SCHEMA pglock",
      "nousage   | leader x                              | GRANT USAGE ON SCHEMA pglock",
      "nousage   | members x                             | GRANT USAGE ON SCHEMA pglock",
      "nousage   | tasks                                 | GRANT USAGE ON SCHEMA pglock",
      "nousage   | jobs                                  | GRANT USAGE ON SCHEMA pglock",
      "nousage   | jobs retry 1                          | GRANT USAGE ON SCHEMA pglock",
      "nousage   | run --name x --fencing-token-env T -- true | GRANT USAGE ON SCHEMA pglock",
      "notables  | history                               | GRANT SELECT ON pglock.history",
      "notables  | tasks                                 | GRANT SELECT ON pglock.scheduled_task",
      "notables  | tasks trigger t                       | GRANT SELECT, UPDATE ON pglock.scheduled_task",
      "notables  | jobs                                  | GRANT SELECT ON pglock.job",
      "notables  | jobs retry 1                          | GRANT SELECT, UPDATE ON pglock.job",
  })
  void aMissingPrivilege_exitsSix_withTheGrantToRun(String role, String command, String grant) {
    String user = switch (role) {
      case "noconnect" -> NO_CONNECT;
      case "nousage" -> NO_USAGE;
      default -> NO_TABLES;
    };
    CliRun run = CliRun.of(args(command, user));
    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.MISSING_PRIVILEGE);
    assertThat(run.err()).as(run.describe()).contains(grant).contains(" TO " + user);
  }

  /** The options go before the words of {@code run}'s command, which take everything after them. */
  private static String[] args(String command, String user) {
    List<String> words = new ArrayList<>(List.of(command.trim().split("\\s+")));
    int at = words.contains("--") ? words.indexOf("--") : words.size();
    words.addAll(at, List.of("--url", TestDatabase.get().jdbcUrl(), "--user", user));
    return words.toArray(String[]::new);
  }

  private static boolean bool(Connection c, String select) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(select); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getBoolean(1);
    }
  }

  private static String string(Connection c, String select) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(select); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.execute();
    }
  }
}
