package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code pglock run --fencing-token-env VAR}, in-process: the lock's fencing token in the command's environment. */
@ExtendWith(NoLeakedLocks.class)
class RunFencingTokenTest {
  private static final String NAMESPACE = "cli-test";

  @TempDir
  Path dir;

  private final String name = "run-" + UUID.randomUUID();

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @Test
  void run_fencingTokenEnv_givesTheCommandAPositiveToken_andTheNextRunALargerOne() throws Exception {
    Path first = dir.resolve("first");
    Path second = dir.resolve("second");

    CliRun run1 = run("--fencing-token-env", "TOKEN", "--", "sh", "-c", "echo \"$TOKEN\" > " + first);
    CliRun run2 = run("--fencing-token-env", "MY_TOKEN", "--", "sh", "-c", "echo \"$MY_TOKEN\" > " + second);

    assertThat(run1.exitCode()).as(run1.describe()).isZero();
    assertThat(run2.exitCode()).as(run2.describe()).isZero();
    long token1 = Long.parseLong(Files.readString(first).strip());
    long token2 = Long.parseLong(Files.readString(second).strip());
    assertThat(token1).isPositive();
    assertThat(token2).isGreaterThan(token1);
  }

  @Test
  void run_fencingTokenEnv_schemaMissing_exitsWithTheSchemaMissingCode_withoutRunningTheCommand() {
    Path ran = dir.resolve("ran");

    CliRun run = run("--schema", "nope", "--fencing-token-env", "TOKEN", "--", "touch", ran.toString());

    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.SCHEMA_MISSING);
    assertThat(run.err().lines()).singleElement().asString()
        .startsWith("pglock run: --fencing-token-env needs pglock's schema \"nope\" at version 2 or later (fencing tokens)")
        .contains("PgLockSchema.migrate(dataSource, \"nope\")");
    assertThat(ran).doesNotExist();
  }

  @Test
  void run_fencingTokenEnv_badOptions_areUsageErrors() {
    assertUsage(run("--fencing-token-env", "1TOKEN", "--", "true"),
        "pglock run: --fencing-token-env must be a shell variable name");
    assertUsage(run("--fencing-token-env", "PGLOCK_LOCK_KEY", "--", "true"),
        "pglock run: --fencing-token-env PGLOCK_LOCK_KEY would hide a variable");
    assertUsage(run("--fencing-token-env", "TOKEN", "--shared", "--", "true"),
        "pglock run: --fencing-token-env and --shared exclude each other");
  }

  private static void assertUsage(CliRun run, String message) {
    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.USAGE);
    assertThat(run.err()).startsWith(message);
  }

  private CliRun run(String... options) {
    List<String> args = new ArrayList<>(List.of("--namespace", NAMESPACE, "--name", name));
    args.addAll(List.of(options));
    return CliRun.onDatabase("run", args.toArray(String[]::new));
  }
}
