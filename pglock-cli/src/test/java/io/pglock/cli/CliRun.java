package io.pglock.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
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

  /** The stdout lines that start with the prefix, stripped of it. */
  List<String> after(String prefix) {
    return out.lines().filter(l -> l.startsWith(prefix)).map(l -> l.substring(prefix.length())).toList();
  }

  String describe() {
    return String.format("exit code; stdout:%n%s%nstderr:%n%s", out, err);
  }
}
