package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.SqlClientProcess;
import io.pglock.testing.SqlClientProcess.Language;
import io.pglock.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A failure that a Python or Node client records through the SQL API ({@code lock_with_history},
 * {@code unlock_with_history}) is what {@code pglock history --failed} prints, beside Java's.
 * Skipped where the client cannot run; .ci/run installs both.
 */
@ExtendWith(NoLeakedLocks.class)
class SqlClientHistoryTest {
  private static final String NAMESPACE = "cli-sql-client-test";
  private static final Duration DEADLINE = Duration.ofSeconds(60);

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @ParameterizedTest
  @EnumSource(Language.class)
  void history_failed_showsTheFailureAClientRecorded(Language language) {
    SqlClientProcess.assumeAvailable(language);
    String name = "sql-" + UUID.randomUUID().toString().substring(0, 8);
    String node = "etl-" + language.name().toLowerCase(java.util.Locale.ROOT) + "-" + ProcessHandle.current().pid();
    List<String> out = SqlClientProcess.run(language, DEADLINE, node, "pglock", "fail", NAMESPACE, name,
        "disk full\nat block 7");
    assertThat(out).hasSize(1).allMatch(l -> l.matches("hold \\d+"));
    String id = out.get(0).substring("hold ".length());

    CliRun run = CliRun.onDatabase("history", "--failed", "--namespace", NAMESPACE, "--name", name);
    assertThat(run.exitCode()).as(run.describe()).isZero();
    List<String> row = run.out().lines().filter(l -> l.contains(NAMESPACE + ":" + name))
        .map(l -> List.of(l.split("\\s{2,}"))).findFirst().orElseThrow(() -> new AssertionError(run.describe()));
    assertThat(row.get(0)).isEqualTo(id);
    assertThat(row.subList(2, row.size())).as(run.describe()).startsWith(NAMESPACE + ":" + name, node)
        .contains("failed", (language == Language.PYTHON ? "RuntimeError" : "TypeError") + ": disk full");
    assertThat(run.out()).doesNotContain("at block 7");
  }
}
