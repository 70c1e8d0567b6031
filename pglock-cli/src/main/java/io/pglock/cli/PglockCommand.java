package io.pglock.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code pglock} command: the entry point of the command-line tool, holding its subcommands.
 *
 * <p>Run without a subcommand it prints its usage on standard error and exits 2 (bad usage). Exit codes (see {@link ExitCodes}): 0 success,
 * 1 a failed check or another failure, 2 bad options, 3 the database could not be reached (no
 * connection, a refused login, an embedded PostgreSQL that did not start), 5 pglock's schema lacks
 * what the command needs, 6 the role may not read it; {@code pglock run} adds its own
 * ({@link RunCommand}). Errors are reported in one line on standard error, with their
 * causes; bad options with a hint to {@code --help}; unexpected errors with a stack trace.
 */
@Command(name = "pglock",
    mixinStandardHelpOptions = true,
    versionProvider = PglockCommand.Version.class,
    description = "Distributed locks on PostgreSQL advisory locks.",
    subcommands = {RunCommand.class, LocksCommand.class, LeaderCommand.class, MembersCommand.class, TasksCommand.class, JobsCommand.class,
        HistoryCommand.class, DashboardCommand.class, KeyCommand.class, DemoCommand.class,
        CommandLine.HelpCommand.class})
public final class PglockCommand implements Callable<Integer> {

  @Spec
  private CommandSpec spec;

  /** Runs the command line and exits the JVM with its exit code. */
  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /**
   * A ready command line for {@code pglock}, writing to standard output and error unless told
   * otherwise with {@link CommandLine#setOut} and {@link CommandLine#setErr}. Its execution
   * exception handler reports pglock's own errors in one line, anything else with its stack trace,
   * and returns exit code 3 when the database could not be reached, 5 when the schema is missing, 6 when a
   * privilege is, else 1 ({@link ErrorReport}). Help is wrapped at spaces only ({@link HelpLayout}).
   */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new PglockCommand());
    cl.setExecutionExceptionHandler(PglockCommand::handleError);
    cl.setParameterExceptionHandler(PglockCommand::handleBadOptions);
    // Everything from the command's first word on is the command's, as with flock, sudo and env:
    // "pglock run --name x ls -l" needs no "--".
    cl.getSubcommands().get("run").setStopAtPositional(true);
    HelpLayout.apply(cl);
    return cl;
  }

  /** Bare {@code pglock}: a usage error, as a missing subcommand is; the usage goes to standard error. */
  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    err.println("pglock: a command is needed");
    spec.commandLine().usage(err);
    err.flush();
    return ExitCodes.USAGE;
  }

  private static int handleBadOptions(CommandLine.ParameterException e, String[] args) {
    CommandLine cl = e.getCommandLine();
    PrintWriter err = cl.getErr();
    String command = cl.getCommandSpec().qualifiedName();
    err.println(command + ": " + e.getMessage());
    CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
    err.println("Try '" + command + " --help' for more information.");
    err.flush();
    return ExitCodes.USAGE;
  }

  private static int handleError(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
    PrintWriter err = cl.getErr();
    ErrorReport report = ErrorReport.of(e, cl);
    report.lines.forEach(err::println);
    if (report.withStackTrace) {
      e.printStackTrace(err);
    }
    err.flush();
    return report.exitCode;
  }

  /** {@return the SQLSTATE of the first SQLException among the error and its causes, or null} */
  static String sqlState(Throwable e) {
    return ErrorReport.sqlState(e);
  }

  /** The version from the jar's manifest, or "development" when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = PglockCommand.class.getPackage().getImplementationVersion();
      return new String[] {"pglock " + (v != null ? v : "(development build)")};
    }
  }
}
