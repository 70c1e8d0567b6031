package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.pglock.LockKey;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pglock run} in-process, for what needs no signals: options, exit codes, and a lock held
 * elsewhere. The cases that kill and signal processes are in {@link RunCommandProcessTest}.
 */
@ExtendWith(NoLeakedLocks.class)
class RunCommandTest {
  private static final String NAMESPACE = "cli-test";

  @TempDir
  Path dir;

  private final String name = "run-" + UUID.randomUUID();
  private final LockKey key = LockKey.named(NAMESPACE, name);

  @Test
  void run_commandRan_exitsWithItsStatus() {
    CliRun run = run("--", "sh", "-c", "exit 7");

    assertThat(run.exitCode()).as(run.describe()).isEqualTo(7);
    assertThat(run.err()).isEmpty();
  }

  @Test
  void run_withoutDoubleDash_takesTheFirstWordOnAsTheCommand() {
    CliRun run = run("sh", "-c", "exit 5");

    assertThat(run.exitCode()).as(run.describe()).isEqualTo(5);
  }

  @Test
  void run_lockHeldBySql_nonblock_exitsWithTheDefaultConflictCodeAtOnce() throws Exception {
    try (Connection c = lockedFromSql()) {
      long start = System.nanoTime();
      CliRun run = run("-n", "--", "touch", dir.resolve("ran").toString());

      assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.DEFAULT_CONFLICT).isEqualTo(1);
      assertThat(run.err()).isEqualTo("pglock run: lock \"" + name + "\" (namespace cli-test) is held by another "
          + "holder; not obtained (tried once); exit code 1" + System.lineSeparator());
      assertThat(dir.resolve("ran")).doesNotExist();
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }
  }

  @Test
  void run_lockHeldBySql_wait_waitsThatLongThenExitsWithTheConflictCode() throws Exception {
    try (Connection c = lockedFromSql()) {
      long start = System.nanoTime();
      CliRun run = run("--wait", "400ms", "-E", "75", "--", "true");
      Duration waited = Duration.ofNanos(System.nanoTime() - start);

      assertThat(run.exitCode()).as(run.describe()).isEqualTo(75);
      assertThat(run.err()).contains("not obtained within 400ms; exit code 75");
      assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(400));
    }
  }

  @Test
  void run_sharedWhileSqlHoldsItShared_runs() throws Exception {
    try (Connection c = TestDatabase.get().connect()) {
      assertThat(query(c, "SELECT pg_try_advisory_lock_shared(" + key.int64() + ")")).isTrue();

      CliRun run = run("--shared", "-n", "--", "sh", "-c", "exit 3");

      assertThat(run.exitCode()).as(run.describe()).isEqualTo(3);
      assertThat(query(c, "SELECT pg_advisory_unlock_shared(" + key.int64() + ")")).isTrue();
    }
  }

  @Test
  void run_commandNotFound_exits127() {
    CliRun run = run("--", "pglock-test-no-such-command");

    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.NOT_FOUND).isEqualTo(127);
    assertThat(run.err()).isEqualTo("pglock run: cannot run pglock-test-no-such-command: No such file or directory"
        + System.lineSeparator());
  }

  @Test
  void run_commandNotExecutable_exits126() {
    CliRun run = run("--", dir.toString());

    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.CANNOT_EXECUTE).isEqualTo(126);
    assertThat(run.err()).startsWith("pglock run: cannot run " + dir + ": ");
  }

  @Test
  void run_unreachableDatabase_exitsWithTheConnectCodeInOneLineWithCauses() {
    CliRun run = assertTimeoutPreemptively(Duration.ofSeconds(15), () -> CliRun.of("run", "--url",
        "jdbc:postgresql://127.0.0.1:1/x", "--name", name, "--", "true"));

    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.UNREACHABLE);
    assertThat(run.err()).startsWith("pglock run: could not open a lock session (SQLSTATE 08001");
  }

  @Test
  void run_noUrl_isBadUsage() {
    CliRun run = CliRun.of("run", "--name", name, "--", "true");

    // Unless the environment running the tests sets PGLOCK_URL, which the default reads.
    if (System.getenv("PGLOCK_URL") == null) {
      assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
      assertThat(run.err()).startsWith("pglock run: no database: give --url jdbc:postgresql://host:5432/db "
          + "or set PGLOCK_URL" + System.lineSeparator() + "Try 'pglock run --help' for more information.");
    } else {
      assertThat(run.exitCode()).isZero();
    }
  }

  @Test
  void run_badOptions_areRefusedInOneLineWithTheUsageCode() {
    assertUsage(List.of("--nonblock", "--wait", "1s"), "pglock run: --nonblock and --wait exclude each other");
    assertUsage(List.of("--wait", "soon"), "pglock run: Invalid value for option '--wait': 'soon' is not a duration");
    assertUsage(List.of("-E", "256"), "pglock run: --conflict-exit-code must be between 0 and 255: 256");
    assertUsage(List.of("--lease", "500ms"), "pglock run: --lease must be between 1s and 1h: 500ms");
    assertUsage(List.of("--grace", "2h"), "pglock run: --grace must be at most 1h: 2h");
    assertUsage(List.of("--url", "postgres://x/y"), "pglock run: --url must be a PostgreSQL JDBC URL");
  }

  @Test
  void run_missingCommand_isBadUsage() {
    CliRun run = CliRun.of("run", "--name", name);

    assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(run.err()).startsWith("pglock run: Missing required parameter: 'COMMAND'");
  }

  @Test
  void run_help_showsExamplesAndExitCodes() {
    CliRun run = CliRun.of("run", "--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("pglock run --name nightly-report --nonblock -- ./report.sh")
        .contains("4       the lock was lost while the command ran");
  }

  @Test
  void nodeName_isCliHostPid_atMost40PrintableCharacters() {
    String node = RunCommand.nodeName();

    assertThat(node).startsWith("cli-").endsWith("-" + ProcessHandle.current().pid()).hasSizeLessThanOrEqualTo(40)
        .matches("[\\x21-\\x7e]+").doesNotContain(":");
  }

  private void assertUsage(List<String> options, String message) {
    List<String> args = new ArrayList<>(List.of("run", "--name", name));
    args.addAll(options);
    args.addAll(List.of("--", "true"));
    CliRun run = CliRun.of(args.toArray(String[]::new));
    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.USAGE);
    assertThat(run.err()).as(String.join(" ", options)).startsWith(message)
        .endsWith("Try 'pglock run --help' for more information." + System.lineSeparator());
    assertThat(run.err().lines()).as("one line and the hint").hasSize(2);
  }

  /** Runs {@code pglock run} on the test database, in the test namespace, on this test's lock name. */
  private CliRun run(String... options) {
    TestDatabase db = TestDatabase.get();
    List<String> args = new ArrayList<>(List.of("run", "--url", db.jdbcUrl(), "--namespace", NAMESPACE,
        "--name", name));
    if (db.user() != null) {
      args.addAll(List.of("--user", db.user()));
    }
    if (db.password() != null) {
      args.addAll(List.of("--password", db.password()));
    }
    args.addAll(List.of(options));
    return CliRun.of(args.toArray(String[]::new));
  }

  /** A connection holding this test's lock; closing it releases the lock. */
  private Connection lockedFromSql() throws SQLException {
    Connection c = TestDatabase.get().connect();
    assertThat(query(c, "SELECT pg_try_advisory_lock(" + key.int64() + ")")).isTrue();
    return c;
  }

  private static boolean query(Connection c, String select) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(select); ResultSet rs = ps.executeQuery()) {
      assertThat(rs.next()).isTrue();
      return rs.getBoolean(1);
    }
  }
}
