package io.pglock.cli;

import io.pglock.LockSessionException;
import io.pglock.MissingPrivilegeException;
import io.pglock.PgLockException;
import io.pglock.SchemaMissingException;
import io.pglock.queue.JobQueueException;
import java.io.PrintWriter;
import java.sql.SQLException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code pglock} command: the entry point of the command-line tool, holding its subcommands.
 *
 * <p>Run without a subcommand it prints its usage. Exit codes (see {@link ExitCodes}): 0 success,
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
        HistoryCommand.class, KeyCommand.class, DemoCommand.class,
        CommandLine.HelpCommand.class})
public final class PglockCommand implements Runnable {

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
   * privilege is, else 1.
   */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new PglockCommand());
    cl.setExecutionExceptionHandler(PglockCommand::handleError);
    cl.setParameterExceptionHandler(PglockCommand::handleBadOptions);
    // Everything from the command's first word on is the command's, as with flock, sudo and env:
    // "pglock run --name x ls -l" needs no "--".
    cl.getSubcommands().get("run").setStopAtPositional(true);
    return cl;
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
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
    // "pglock tasks trigger", "pglock jobs retry": the whole command, as handleBadOptions names it
    String command = cl.getCommandSpec().qualifiedName();
    if (e instanceof PgLockException || e instanceof JobQueueException || e instanceof DemoDatabase.UnreachableException) {
      err.println(command + ": " + e.getMessage());
      for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
        err.println("  caused by: " + c);
      }
    } else {
      err.println(command + " failed:");
      e.printStackTrace(err);
    }
    err.flush();
    return exitCode(e);
  }

  private static int exitCode(Exception e) {
    if (e instanceof SchemaMissingException) {
      return ExitCodes.SCHEMA_MISSING;
    }
    if (e instanceof MissingPrivilegeException) {
      return ExitCodes.MISSING_PRIVILEGE;
    }
    if (e instanceof JobQueueException) {
      // JobAdmin wraps every database error alike (TaskAdmin tells them apart): its SQLSTATE says which
      String state = sqlState(e);
      if ("42501".equals(state)) {
        return ExitCodes.MISSING_PRIVILEGE;
      }
      // 08 connection exception, 28 login refused, 3D no such database
      boolean unreachable = state != null && (state.startsWith("08") || state.startsWith("28") || state.startsWith("3D"));
      return unreachable ? ExitCodes.UNREACHABLE : ExitCodes.CHECK_FAILED;
    }
    // A lock session that cannot reach the server mid-run is the same trouble as at the start.
    boolean unreachable = e instanceof DemoDatabase.UnreachableException || e instanceof LockSessionException;
    return unreachable ? ExitCodes.UNREACHABLE : ExitCodes.CHECK_FAILED;
  }

  /** {@return the SQLSTATE of the first SQLException among the error and its causes, or null} */
  static String sqlState(Throwable e) {
    for (Throwable c = e; c != null && c != c.getCause(); c = c.getCause()) {
      if (c instanceof SQLException s && s.getSQLState() != null) {
        return s.getSQLState();
      }
    }
    return null;
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
