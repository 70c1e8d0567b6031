package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.pglock.testing.TestDatabase;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Runs {@code pglock demo} in-process against the test database (see {@link TestDatabase}). */
class DemoCommandTest {
  private static final String EVENT = "\\S+ worker-\\d (took|released) invoice-\\d+(: .*)?";
  private static final String TALLY = " +worker-\\d +processed +\\d+ +already done +\\d+ +busy +\\d+";

  @Test
  void demo_threeWorkersSixResourcesOneRound_processesEachOnceWithoutOverlap() {
    Run run = demo(null, "--workers", "3", "--resources", "6", "--rounds", "1");

    assertThat(run.exitCode).as(run.describe()).isZero();
    assertThat(run.out)
        .contains("total processed: 6 (6 resources x 1 round = 6)")
        .contains("check: OK: 0 overlaps (never two workers inside one resource at once); "
            + "every round processed all 6 resources, none twice")
        .contains("round 1 of 1 done: 6/6 resources processed")
        .contains("result: every check held (exit code 0)");
    assertThat(run.err).isEmpty();
  }

  @Test
  void demo_default_printsATallyPerWorkerAndRoundWithALegendNotEveryTake() {
    Run run = demo(null, "--workers", "3", "--resources", "6", "--rounds", "2");

    assertThat(run.exitCode).as(run.describe()).isZero();
    assertThat(run.out)
        .contains("  already done  it got the lock, but another worker had already processed that resource "
            + "in this round: nothing left to do")
        .contains("  busy          another worker held the lock at that moment, so it skipped the resource");
    assertThat(run.lines(TALLY)).as("3 workers x (2 rounds + summary)").hasSize(9);
    assertThat(run.lines(EVENT)).as("no per-event lines by default").isEmpty();
  }

  @Test
  void demo_verbose_printsEveryTakeAndRelease() {
    Run run = demo(null, "--verbose", "--workers", "3", "--resources", "6", "--rounds", "1");

    assertThat(run.exitCode).as(run.describe()).isZero();
    assertThat(run.lines("\\S+ worker-\\d took invoice-\\d")).as("one 'took' line per resource").hasSize(6);
    assertThat(run.lines("\\S+ worker-\\d released invoice-\\d")).hasSize(6);
    assertThat(run.lines(EVENT)).as("the lines the default leaves out").hasSizeGreaterThanOrEqualTo(12);
  }

  @Test
  void demo_afterTheRounds_terminatedSessionSignalsLossAndAnotherWorkerTakesTheLock() {
    Run run = demo(null, "--workers", "2", "--resources", "3", "--rounds", "1");

    assertThat(run.exitCode).as(run.describe()).isZero();
    assertThat(run.lines("\\S+ connection loss: worker-1 holds invoice-1; the demo ends its lock session \\(backend pid "
        + "\\d+, application_name pglock:worker-1:.*\\) with pg_terminate_backend.*")).hasSize(1);
    assertThat(run.lines("\\S+ +worker-1's onLoss callback fired \\d+ ms later with cause CONNECTION_LOST; "
        + "handle.state\\(\\) is LOST, isHeld\\(\\) false.*")).hasSize(1);
    assertThat(run.lines("\\S+ +worker-2 took invoice-1 \\d+ ms after the kill: .*")).hasSize(1);
  }

  @Test
  void demo_afterTheRounds_lockTakenFromSqlKeepsTheWorkerOutUntilSqlUnlocks() {
    Run run = demo(null, "--workers", "2", "--resources", "3", "--rounds", "1");

    assertThat(run.exitCode).as(run.describe()).isZero();
    assertThat(run.lines("\\S+ SQL and Java share locks: a plain JDBC connection \\(no pglock\\) runs "
        + "SELECT pg_advisory_lock\\(.+\\).*")).hasSize(1);
    assertThat(run.out)
        .contains("worker-1: lock(\"invoice-3\").tryAcquire() returned empty while SQL held the lock")
        .contains("after SQL ran pg_advisory_unlock, the same tryAcquire() returned a handle");
  }

  @Test
  void demo_userWithoutUrl_isRefusedAsBadUsage() {
    Run run = run("demo", "--user", "postgres");

    assertThat(run.exitCode).isEqualTo(ExitCodes.USAGE);
    assertThat(run.err).contains("--user and --password need --url");
  }

  @Test
  void demo_unreachableServer_exitsWithTheConnectCodeWithinSeconds() {
    Run run = assertTimeoutPreemptively(Duration.ofSeconds(15),
        () -> run("demo", "--url", "jdbc:postgresql://127.0.0.1:1/x", "--user", "postgres"));

    assertThat(run.exitCode).as(run.describe()).isEqualTo(ExitCodes.UNREACHABLE);
    assertThat(run.err).startsWith("pglock demo: could not connect to jdbc:postgresql://127.0.0.1:1/x (SQLState 08001)");
    assertThat(run.out).doesNotContain("round 1");
  }

  @Test
  void demo_unknownRole_exitsWithTheConnectCode() {
    Run run = demo("pglock_demo_no_such_role", "--rounds", "1");

    assertThat(run.exitCode).as(run.describe()).isEqualTo(ExitCodes.UNREACHABLE);
    assertThat(run.err).startsWith("pglock demo: could not connect to ").contains("pglock_demo_no_such_role");
  }

  /** Runs the demo on the test database, as {@code user} if given, else as the test database's user. */
  private static Run demo(String user, String... options) {
    TestDatabase db = TestDatabase.get();
    List<String> args = new ArrayList<>(List.of("demo", "--url", db.jdbcUrl()));
    String asUser = user != null ? user : db.user();
    if (asUser != null) {
      args.addAll(List.of("--user", asUser));
    }
    if (db.password() != null) {
      args.addAll(List.of("--password", db.password()));
    }
    args.addAll(List.of(options));
    return run(args.toArray(String[]::new));
  }

  private static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = PglockCommand.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int exitCode = cl.execute(args);
    return new Run(exitCode, out.toString(), err.toString());
  }

  private record Run(int exitCode, String out, String err) {
    List<String> lines(String regex) {
      return out.lines().filter(l -> l.matches(regex)).toList();
    }

    String describe() {
      return String.format("exit code; stdout:%n%s%nstderr:%n%s", out, err);
    }
  }
}
