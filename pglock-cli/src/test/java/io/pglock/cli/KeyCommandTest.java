package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.LockKey;
import io.pglock.PgLockSchema;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code pglock key}: the numbers LockKey computes, and SQL that PostgreSQL agrees with. */
class KeyCommandTest {

  @Test
  void key_name_printsTheInt64KeyAndHowPgLocksShowsIt() {
    LockKey key = LockKey.named("billing", "invoice-42");

    CliRun run = CliRun.of("key", "--namespace", "billing", "invoice-42");

    assertThat(run.exitCode()).as(run.describe()).isZero();
    assertThat(run.out()).contains("key        " + key.int64() + "  (bigint; ")
        .contains("pg_locks   locktype = 'advisory', classid = " + Integer.toUnsignedLong(key.first())
            + ", objid = " + Integer.toUnsignedLong(key.second()) + ", objsubid = 1")
        .contains("  SELECT pglock.key('billing', 'invoice-42');")
        .contains("  SELECT pg_advisory_lock(" + key.int64() + ");");
    assertThat(run.err()).isEmpty();
  }

  @Test
  void key_quiet_printsOnlyTheKey_inTheDefaultNamespace() {
    CliRun run = CliRun.of("key", "--quiet", "invoice-42");

    assertThat(run.exitCode()).as(run.describe()).isZero();
    assertThat(run.out()).isEqualTo(LockKey.named("default", "invoice-42").int64() + System.lineSeparator());
  }

  @ParameterizedTest
  @ValueSource(strings = {"invoice-42", "it's", "''; DROP TABLE x; --", "back\\slash", "ünïcødé ✓", "a:b"})
  void key_printedSql_computesTheSameKeyOnPostgresql(String name) throws Exception {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
    long expected = LockKey.named("billing", name).int64();

    CliRun run = CliRun.of("key", "--namespace", "billing", name);

    assertThat(run.exitCode()).as(run.describe()).isZero();
    String withSchema = statementAfter(run, "SQL, with the pglock schema installed:");
    String builtIns = statementAfter(run, "SQL, with built-in functions only:");
    try (Connection c = TestDatabase.get().connect(); Statement st = c.createStatement()) {
      assertThat(single(st, withSchema)).as(withSchema).isEqualTo(expected);
      assertThat(single(st, builtIns)).as(builtIns).isEqualTo(expected);
    }
  }

  @Test
  void key_blankName_isBadUsage() {
    CliRun run = CliRun.of("key", " ");

    assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(run.err()).isEqualTo("pglock key: lock name must not be blank: \" \"" + System.lineSeparator()
        + "Try 'pglock key --help' for more information." + System.lineSeparator());
  }

  @Test
  void key_namespaceWithColon_isBadUsageNamingTheOption() {
    CliRun run = CliRun.of("key", "--namespace", "a:b", "x");

    assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(run.err()).startsWith("pglock key: --namespace: namespace \"a:b\" contains ':'");
  }

  @Test
  void key_help_showsAnExample() {
    CliRun run = CliRun.of("key", "--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("Examples:").contains("pglock key --namespace billing invoice-42");
  }

  /** The SQL statement on the line after the heading, without its semicolon. */
  private static String statementAfter(CliRun run, String heading) {
    var lines = run.out().lines().toList();
    String line = lines.get(lines.indexOf(heading) + 1).trim();
    assertThat(line).startsWith("SELECT ").endsWith(";");
    return line.substring(0, line.length() - 1);
  }

  private static long single(Statement st, String select) throws Exception {
    try (ResultSet rs = st.executeQuery(select)) {
      assertThat(rs.next()).isTrue();
      return rs.getLong(1);
    }
  }
}
