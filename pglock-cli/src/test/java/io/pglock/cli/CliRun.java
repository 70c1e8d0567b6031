package io.pglock.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import io.pglock.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import picocli.CommandLine;

/** One in-process run of the {@code pglock} command line: its exit code and what it printed. */
record CliRun(int exitCode, String out, String err) {

  static CliRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = PglockCommand.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int exitCode = cl.execute(args);
    return new CliRun(exitCode, out.toString(), err.toString());
  }

  /**
   * Runs a subcommand connected to the test database (its URL, user and password as options), with
   * the options given.
   */
  static CliRun onDatabase(String command, String... options) {
    TestDatabase db = TestDatabase.get();
    List<String> args = new ArrayList<>(List.of(command, "--url", db.jdbcUrl()));
    if (db.user() != null) {
      args.addAll(List.of("--user", db.user()));
    }
    if (db.password() != null) {
      args.addAll(List.of("--password", db.password()));
    }
    args.addAll(List.of(options));
    return of(args.toArray(String[]::new));
  }

  /**
   * Runs {@link #onDatabase} again, every 50 ms, until its result satisfies the condition: for what the
   * library writes in the background (lock names, history), which shows within about a second.
   *
   * @throws AssertionError with the last output if the timeout passes first
   */
  static CliRun awaitOnDatabase(Duration timeout, Predicate<CliRun> condition, String command, String... options)
      throws InterruptedException {
    CliRun[] last = new CliRun[1];
    try {
      io.pglock.testing.Await.until("pglock " + command + " to show what was expected", timeout, () -> {
        last[0] = onDatabase(command, options);
        return condition.test(last[0]);
      });
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; last " + (last[0] == null ? "none" : last[0].describe()), e);
    }
    return last[0];
  }

  /** The stdout lines that start with the prefix, stripped of it. */
  List<String> after(String prefix) {
    return out.lines().filter(l -> l.startsWith(prefix)).map(l -> l.substring(prefix.length())).toList();
  }

  /** The stdout lines of a table whose first cell (indent stripped) is the given one, split into cells. */
  List<List<String>> rows(String firstCell) {
    return out.lines().map(l -> List.of(l.strip().split("\\s{2,}"))).filter(c -> c.get(0).equals(firstCell)).toList();
  }

  String describe() {
    return String.format("exit code %d; stdout:%n%s%nstderr:%n%s", exitCode, out, err);
  }
}
