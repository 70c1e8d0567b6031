package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code pglock history} against the test database, on holds this test records through
 * {@code SessionLock.run} with history on (written in batches within about 100 ms).
 */
@ExtendWith(NoLeakedLocks.class)
class HistoryCommandTest {
  private static final String NAMESPACE = "cli-history-test";
  private static final Duration RECORDED = Duration.ofSeconds(15);

  private final String prefix = "hist-" + UUID.randomUUID().toString().substring(0, 8);
  private final String node = "history-test-" + ProcessHandle.current().pid();

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @Test
  void history_failed_showsAFailedRun_withNodeOutcomeAndTheFirstLineOfTheError_andNotAReleasedOne() throws Exception {
    String failing = prefix + "-failing";
    String fine = prefix + "-fine";
    String failingLock = NAMESPACE + ":" + failing;
    // Open until the holds show: the history is written in batches by a thread of the PgLocks.
    try (PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).namespace(NAMESPACE).nodeName(node)
        .history().build()) {
      assertThatThrownBy(() -> locks.lock(failing).run(Duration.ofSeconds(10), h -> {
        throw new IllegalStateException("disk full\nat block 7");
      })).isInstanceOf(IllegalStateException.class);
      String result = locks.lock(fine).run(Duration.ofSeconds(10), h -> "done");
      assertThat(result).isEqualTo("done");

      CliRun all = CliRun.awaitOnDatabase(RECORDED, r -> r.out().contains(failingLock) && r.out().contains(fine),
          "history", "--namespace", NAMESPACE, "--name", prefix + "-*");
      CliRun run = CliRun.onDatabase("history", "--failed", "--namespace", NAMESPACE, "--name", prefix + "-*");

      assertThat(run.exitCode()).as(run.describe()).isZero();
      List<String> row = run.out().lines().filter(l -> l.contains(failingLock)).map(l -> List.of(l.split("\\s{2,}")))
          .findFirst().orElseThrow(() -> new AssertionError(run.describe()));
      assertThat(row.subList(2, row.size())).as(run.describe()).hasSize(6)
          .startsWith(failingLock, node).contains("failed", "IllegalStateException: disk full");
      assertThat(row.get(0)).as("the hold's id").matches("\\d+");
      assertThat(row.get(1)).as("acquired at").matches("\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d");
      assertThat(run.out()).doesNotContain("at block 7").doesNotContain(fine);

      List<String> locksShown = all.out().lines().skip(1).map(l -> l.split("\\s{2,}")[2]).toList();
      assertThat(locksShown).as("newest first").containsExactly(NAMESPACE + ":" + fine, failingLock);
      assertThat(all.out().lines().filter(l -> l.contains(fine)).findFirst().orElseThrow()).contains("  released");

      CliRun stack = CliRun.onDatabase("history", "--show-stack", row.get(0));
      assertThat(stack.exitCode()).as(stack.describe()).isZero();
      assertThat(stack.out()).contains("lock      " + failingLock)
          .contains("error     java.lang.IllegalStateException: disk full\nat block 7")
          .contains("stack:" + System.lineSeparator())
          .contains(HistoryCommandTest.class.getName());
    }
  }

  @Test
  void history_showStack_unknownId_exits1InOneLine() {
    CliRun run = CliRun.onDatabase("history", "--show-stack", "1");

    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.CHECK_FAILED);
    assertThat(run.err()).isEqualTo("pglock history: no hold with id 1 in pglock.history" + System.lineSeparator());
  }

  @Test
  void history_schemaMissing_exitsWithTheSchemaMissingCode_inOneLineNamingTheFix() {
    CliRun run = CliRun.onDatabase("history", "--schema", "nope");

    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.SCHEMA_MISSING);
    assertThat(run.err().lines()).singleElement().asString()
        .startsWith("pglock history: the view nope.history is missing")
        .contains("PgLockSchema.migrate(dataSource, \"nope\")").contains("V4__lock_history.sql");
  }

  @Test
  void history_roleWithoutTheGrant_exitsWithTheMissingPrivilegeCode_namingTheGrant_whichThenWorks() throws Exception {
    String role = "pglock_cli_reader_" + prefix.substring(5);
    try (Connection admin = TestDatabase.get().connect()) {
      assumeTrue(query(admin, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"),
          "needs a superuser to create a role");
      execute(admin, "CREATE ROLE " + role + " LOGIN");
      try {
        CliRun refused = CliRun.of("history", "--url", TestDatabase.get().jdbcUrl(), "--user", role);

        assertThat(refused.exitCode()).as(refused.describe()).isEqualTo(ExitCodes.MISSING_PRIVILEGE).isEqualTo(6);
        // PUBLIC has no USAGE on pglock's schema unless someone granted it: then only the SELECT is missing.
        boolean usage = query(admin, "SELECT has_schema_privilege('" + role + "', 'pglock', 'USAGE')");
        String grant = (usage ? "" : "GRANT USAGE ON SCHEMA pglock TO " + role + "; ")
            + "GRANT SELECT ON pglock.history TO " + role + ";";
        assertThat(refused.err()).isEqualTo("pglock history: role " + role + " may not read pglock.history "
            + "(SQLSTATE 42501); as the schema's owner or a superuser, run: " + grant + System.lineSeparator());

        execute(admin, grant);
        CliRun granted = CliRun.of("history", "--url", TestDatabase.get().jdbcUrl(), "--user", role, "--limit", "1");
        assertThat(granted.exitCode()).as(granted.describe()).isZero();
      } finally {
        execute(admin, "DROP OWNED BY " + role);
        execute(admin, "DROP ROLE " + role);
      }
    }
  }

  @Test
  void history_badOptions_areUsageErrors() {
    assertThat(CliRun.onDatabase("history", "--limit", "0").err())
        .startsWith("pglock history: --limit must be between 1 and 10000: 0");
    assertThat(CliRun.onDatabase("history", "--show-stack", "7", "--failed").err())
        .startsWith("pglock history: --show-stack prints one hold");
    assertThat(CliRun.onDatabase("history", "--since", "soon").exitCode()).isEqualTo(ExitCodes.USAGE);
  }

  @Test
  void history_help_showsAnExampleAndTheExitCodes() {
    CliRun run = CliRun.of("history", "--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("pglock history --failed --since 1d").containsPattern("\n  6 +the role lacks a privilege");
  }

  static boolean query(Connection c, String select) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(select); ResultSet rs = ps.executeQuery()) {
      assertThat(rs.next()).isTrue();
      return rs.getBoolean(1);
    }
  }

  static void execute(Connection c, String sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.execute();
    }
  }
}
