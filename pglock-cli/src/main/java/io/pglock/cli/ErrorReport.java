package io.pglock.cli;

import io.pglock.LockSessionException;
import io.pglock.MissingPrivilegeException;
import io.pglock.PgLockException;
import io.pglock.SchemaMissingException;
import io.pglock.queue.JobQueueException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * What the {@code pglock} command prints and exits with when a subcommand fails: one rule for
 * every command, decided by what went wrong rather than by which library call noticed it.
 *
 * <ul>
 *   <li>6: the role lacks a privilege (SQLSTATE 42501 anywhere in the causes: no CONNECT on the
 *       database, no USAGE on the schema, no privilege on a table or function), with the GRANT
 *       to run;
 *   <li>5: pglock's schema lacks what the command needs;
 *   <li>3: the database could not be reached (SQLSTATE class 08 connection, 28 login, 3D no such
 *       database, or a lock session that could not be opened), and a server that is not
 *       PostgreSQL said so;
 *   <li>1: anything else.
 * </ul>
 *
 * <p>Messages name the command's own options ({@code --connect-timeout}), never the Java builder
 * options the library's messages name.
 */
final class ErrorReport {
  static final String INSUFFICIENT_PRIVILEGE = "42501";
  /** The library's advice, in Java terms, and the same advice in the command's terms. */
  private static final List<String[]> CLI_TERMS = List.of(
      new String[] {"PgLocksBuilder.connectTimeout", "--connect-timeout"},
      new String[] {"PgLocksBuilder.lease", "--lease"});
  private static final Pattern DENIED = Pattern.compile(
      "permission denied for (database|schema|table|view|relation|sequence|function) \"?([^\"\\s]+)\"?");
  /** How long the probe for a server that is not PostgreSQL may take. */
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

  final int exitCode;
  final List<String> lines;
  final boolean withStackTrace;

  private ErrorReport(int exitCode, List<String> lines, boolean withStackTrace) {
    this.exitCode = exitCode;
    this.lines = lines;
    this.withStackTrace = withStackTrace;
  }

  /** The report of a subcommand's failure, read with the options the command line was given. */
  static ErrorReport of(Exception e, CommandLine cl) {
    String command = cl.getCommandSpec().qualifiedName();
    String state = sqlState(e);
    // The core reports a view it may not read for want of USAGE as missing, with the SQLSTATE in its message.
    boolean deniedView = e instanceof SchemaMissingException && String.valueOf(e.getMessage())
        .contains("SQLSTATE " + INSUFFICIENT_PRIVILEGE);
    if (INSUFFICIENT_PRIVILEGE.equals(state) || e instanceof MissingPrivilegeException || deniedView) {
      return new ErrorReport(ExitCodes.MISSING_PRIVILEGE, privilege(e, cl, command), false);
    }
    if (e instanceof SchemaMissingException) {
      return known(ExitCodes.SCHEMA_MISSING, command, e, cl);
    }
    boolean connection = state != null && (state.startsWith("08") || state.startsWith("28") || state.startsWith("3D"));
    if (connection) {
      Optional<String> notPg = ServerProbe.notPostgres(option(cl, "--url"), PROBE_TIMEOUT);
      if (notPg.isPresent()) {
        List<String> lines = new ArrayList<>(List.of(command + ": " + notPg.get(),
            "  pgjdbc said: " + cliTerms(rootSqlMessage(e))));
        timeoutHint(lines, cl);
        return new ErrorReport(ExitCodes.UNREACHABLE, lines, false);
      }
      return known(ExitCodes.UNREACHABLE, command, e, cl);
    }
    if (e instanceof LockSessionException || e instanceof DemoDatabase.UnreachableException) {
      return known(ExitCodes.UNREACHABLE, command, e, cl);
    }
    if (e instanceof PgLockException || e instanceof JobQueueException) {
      return known(ExitCodes.CHECK_FAILED, command, e, cl);
    }
    return new ErrorReport(ExitCodes.CHECK_FAILED, List.of(command + " failed:"), true);
  }

  /** pglock's own error: its message and causes, one line each. */
  private static ErrorReport known(int exitCode, String command, Exception e, CommandLine cl) {
    List<String> lines = new ArrayList<>();
    lines.add(command + ": " + cliTerms(e.getMessage()));
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      lines.add("  caused by: " + cliTerms(c.toString()));
    }
    if (exitCode == ExitCodes.UNREACHABLE) {
      timeoutHint(lines, cl);
    }
    return new ErrorReport(exitCode, lines, false);
  }

  /** After a connection that timed out: the option that sets the time, unless a line names it already. */
  private static void timeoutHint(List<String> lines, CommandLine cl) {
    String timeout = option(cl, "--connect-timeout");
    boolean timedOut = lines.stream().anyMatch(l -> l.contains("timed out") || l.contains("connect timeout"));
    if (timeout != null && timedOut && lines.stream().noneMatch(l -> l.contains("--connect-timeout"))) {
      lines.add("  the connection was given --connect-timeout " + DurationConverter.format(Duration.parse(timeout))
          + "; raise it if the server is only slow (a loaded machine, a distant network)");
    }
  }

  private static List<String> privilege(Exception e, CommandLine cl, String command) {
    String role = role(cl);
    String schema = Optional.ofNullable(option(cl, "--schema")).orElse("pglock");
    String server = rootSqlMessage(e);
    Matcher m = DENIED.matcher(server == null ? "" : server);
    String grant;
    if (e instanceof SchemaMissingException) {
      server = "permission denied for schema " + schema;
      grant = "GRANT USAGE ON SCHEMA " + quoted(schema) + " TO " + role;
    } else if (m.find()) {
      String object = m.group(2);
      grant = switch (m.group(1)) {
        case "database" -> "GRANT CONNECT ON DATABASE " + quoted(object) + " TO " + role;
        case "schema" -> "GRANT USAGE ON SCHEMA " + quoted(object) + " TO " + role;
        case "sequence" -> "GRANT USAGE ON SEQUENCE " + qualified(schema, object) + " TO " + role;
        case "function" -> "GRANT EXECUTE ON FUNCTION " + qualified(schema, object) + " TO " + role;
        default -> "GRANT " + tablePrivileges(command) + " ON " + qualified(schema, object) + " TO " + role;
      };
    } else {
      grant = null;
    }
    List<String> lines = new ArrayList<>();
    if (e instanceof MissingPrivilegeException && grant == null) {
      // The library's message names the object and, where it can, the GRANT.
      lines.add(command + ": " + cliTerms(e.getMessage()));
    } else {
      lines.add(command + ": the role " + role + " lacks a privilege"
          + (server == null ? "" : ": " + server.lines().findFirst().orElse("").replaceFirst("^(FATAL|ERROR): ", ""))
          + (grant == null ? "; ask the database's owner to grant it"
              : "; as the owner of the object or a superuser run: " + grant));
    }
    return lines;
  }

  /** The table privileges a command needs: reading ones SELECT, changing ones what they change. */
  static String tablePrivileges(String command) {
    if (command.endsWith(" delete")) {
      return "SELECT, DELETE";
    }
    if (command.matches(".* (trigger|pause|resume|retry|discard|cancel)$")) {
      return "SELECT, UPDATE";
    }
    if (command.equals("pglock run")) {
      return "SELECT, INSERT, UPDATE";
    }
    return "SELECT";
  }

  /** The role the command connects as: --user, else the URL's user=, else pgjdbc's default (the OS user). */
  private static String role(CommandLine cl) {
    String user = option(cl, "--user");
    if (user == null || user.isEmpty()) {
      String url = option(cl, "--url");
      Properties p = url == null ? null : org.postgresql.Driver.parseURL(url, null);
      user = p == null ? null : p.getProperty("user");
    }
    if (user == null || user.isEmpty()) {
      user = System.getProperty("user.name", "your_role");
    }
    return quoted(user);
  }

  /** An identifier as SQL needs it: bare if lower-case letters, digits and '_', else double-quoted. */
  static String quoted(String identifier) {
    return identifier.matches("[a-z_][a-z0-9_$]*") ? identifier : "\"" + identifier.replace("\"", "\"\"") + "\"";
  }

  private static String qualified(String schema, String object) {
    return object.contains(".") ? object : quoted(schema) + "." + quoted(object);
  }

  /** The value of one of the command's options (after defaults), or null if it has no such option. */
  static String option(CommandLine cl, String name) {
    OptionSpec o = cl.getCommandSpec().findOption(name);
    if (o == null) {
      return null;
    }
    Object v = o.getValue();
    return v == null ? null : v.toString();
  }

  /** The library's advice in the command's terms: {@code --connect-timeout}, not the builder's option. */
  static String cliTerms(String message) {
    if (message == null) {
      return null;
    }
    String s = message;
    for (String[] t : CLI_TERMS) {
      s = s.replace(t[0], t[1]);
    }
    return s;
  }

  /** {@return the SQLSTATE of the first SQLException among the error and its causes, or null} */
  static String sqlState(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof SQLException s && s.getSQLState() != null) {
        return s.getSQLState();
      }
    }
    return null;
  }

  /** The server's or the driver's message of the first SQLException among the causes, or null. */
  private static String rootSqlMessage(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof SQLException s) {
        return s.getMessage();
      }
    }
    return e.getMessage();
  }
}
