package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.testing.TestDatabase;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Runs {@code pglock demo} in-process against the test database (see {@link TestDatabase}). */
class DemoCommandTest {

  @Test
  void demo_threeWorkersSixResourcesOneRound_processesEachOnceWithoutOverlap() {
    TestDatabase db = TestDatabase.get();
    List<String> args = new ArrayList<>(List.of("demo", "--url", db.jdbcUrl(),
        "--workers", "3", "--resources", "6", "--rounds", "1"));
    if (db.user() != null) {
      args.addAll(List.of("--user", db.user()));
    }
    if (db.password() != null) {
      args.addAll(List.of("--password", db.password()));
    }
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = PglockCommand.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));

    int exitCode = cl.execute(args.toArray(String[]::new));

    String output = out.toString();
    assertThat(exitCode).as("exit code; stdout:%n%s%nstderr:%n%s", output, err).isZero();
    assertThat(output)
        .contains("total processed: 6 (6 resources x 1 round = 6)")
        .contains("check: OK: 0 overlaps (never two workers inside one resource at once); "
            + "every round processed all 6 resources, none twice")
        .contains("round 1 done: 6/6 resources processed");
    assertThat(output.lines().filter(l -> l.matches("\\S+ worker-\\d took invoice-\\d")))
        .as("one 'took' line per resource")
        .hasSize(6);
    assertThat(err.toString()).isEmpty();
  }

  @Test
  void demo_userWithoutUrl_isRefusedAsBadUsage() {
    StringWriter err = new StringWriter();
    CommandLine cl = PglockCommand.commandLine();
    cl.setOut(new PrintWriter(new StringWriter(), true));
    cl.setErr(new PrintWriter(err, true));

    int exitCode = cl.execute("demo", "--user", "postgres");

    assertThat(exitCode).isEqualTo(2);
    assertThat(err.toString()).contains("--user and --password need --url");
  }

  @Test
  void demo_unreachableServer_failsWithOneLineError() {
    StringWriter err = new StringWriter();
    CommandLine cl = PglockCommand.commandLine();
    cl.setOut(new PrintWriter(new StringWriter(), true));
    cl.setErr(new PrintWriter(err, true));

    int exitCode = cl.execute("demo", "--url", "jdbc:postgresql://127.0.0.1:1/nowhere?connectTimeout=2",
        "--user", "postgres");

    assertThat(exitCode).isEqualTo(1);
    assertThat(err.toString()).startsWith("pglock demo: could not open a lock session");
  }
}
