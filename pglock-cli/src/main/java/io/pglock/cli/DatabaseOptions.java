package io.pglock.cli;

import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The connection options the commands that reach a database share (a picocli mixin):
 * {@code --url}, {@code --user}, {@code --password} and {@code --connect-timeout}, the first three with an environment variable as its
 * default so that a password need not appear on a command line, where {@code ps} shows it.
 * pgjdbc itself reads {@code ~/.pgpass} (or {@code PGPASSFILE}) when no password is given.
 */
final class DatabaseOptions {
  @Spec(Spec.Target.MIXEE)
  private CommandSpec spec;

  @Option(names = "--url", paramLabel = "JDBC_URL", defaultValue = "${env:PGLOCK_URL}",
      description = "The PostgreSQL server and database to connect to, e.g. "
          + "jdbc:postgresql://db.example:5432/app (default: $PGLOCK_URL).")
  private String url;

  @Option(names = "--user", paramLabel = "USER", defaultValue = "${env:PGLOCK_USER}",
      description = "Database user (default: $PGLOCK_USER, else the URL's user=, else pgjdbc's default).")
  private String user;

  @Option(names = "--password", paramLabel = "PASSWORD", defaultValue = "${env:PGLOCK_PASSWORD}",
      description = "Database password; prefer $PGLOCK_PASSWORD (the default), $PGPASSWORD or ~/.pgpass, "
          + "which ps does not show.")
  private String password;

  @Option(names = "--connect-timeout", paramLabel = "DURATION", defaultValue = "10s",
      converter = DurationConverter.class,
      description = "How long to wait for the database to accept a connection and a login, 1s to 5m: 500ms, "
          + "30s, 2m, or seconds (default: ${DEFAULT-VALUE}, as pgjdbc's). Raise it for a loaded machine or a "
          + "slow network.")
  private Duration connectTimeout;

  /** The shortest and longest {@code --connect-timeout}: pgjdbc counts whole seconds, the library at most 5m. */
  static final Duration MIN_CONNECT_TIMEOUT = Duration.ofSeconds(1);
  static final Duration MAX_CONNECT_TIMEOUT = Duration.ofMinutes(5);

  /**
   * The connect timeout, checked.
   *
   * @throws ParameterException if it is out of range
   */
  Duration connectTimeout() {
    return checkConnectTimeout(spec, connectTimeout);
  }

  static Duration checkConnectTimeout(CommandSpec spec, Duration timeout) {
    if (timeout.compareTo(MIN_CONNECT_TIMEOUT) < 0 || timeout.compareTo(MAX_CONNECT_TIMEOUT) > 0) {
      throw new ParameterException(spec.commandLine(),
          "--connect-timeout must be between 1s and 5m: " + DurationConverter.format(timeout));
    }
    return timeout;
  }

  /** pgjdbc's connectTimeout and loginTimeout count whole seconds: rounded up. */
  static int wholeSeconds(Duration d) {
    return (int) Math.max(1, (d.toMillis() + 999) / 1000);
  }

  /**
   * A non-pooling data source for the options, read with the process environment.
   *
   * @throws ParameterException if no URL is given or it is not a PostgreSQL JDBC URL
   */
  DataSource dataSource() {
    return dataSource(System.getenv());
  }

  /**
   * A data source for commands that only read (one query per connection): every statement ends
   * within the timeout ({@code statement_timeout}), a connection attempt within
   * {@code --connect-timeout}, and a silent network within a little more than the statement
   * timeout, so that a refresh of {@code pglock locks --watch} can never hang.
   *
   * @throws ParameterException as {@link #dataSource()}
   */
  DataSource readingDataSource(Duration timeout) {
    PGSimpleDataSource ds = pgDataSource(System.getenv());
    int seconds = wholeSeconds(timeout);
    // The server cancels a slow statement; the socket timeout, later, covers a server that no longer answers.
    ds.setSocketTimeout(seconds + 5);
    String options = ds.getOptions();
    ds.setOptions((options == null || options.isBlank() ? "" : options + " ")
        + "-c statement_timeout=" + timeout.toMillis());
    return ds;
  }

  /** As {@link #dataSource()}, with the environment given (for {@code PGPASSWORD}). */
  DataSource dataSource(Map<String, String> env) {
    return pgDataSource(env);
  }

  private PGSimpleDataSource pgDataSource(Map<String, String> env) {
    if (url == null || url.isBlank()) {
      throw new ParameterException(spec.commandLine(),
          "no database: give --url jdbc:postgresql://host:5432/db or set PGLOCK_URL");
    }
    if (!url.startsWith("jdbc:postgresql:")) {
      throw new ParameterException(spec.commandLine(),
          "--url must be a PostgreSQL JDBC URL such as jdbc:postgresql://127.0.0.1:5432/mydb: " + shownUrl());
    }
    Duration connect = connectTimeout();
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url);
    ds.setConnectTimeout(wholeSeconds(connect));
    ds.setLoginTimeout(wholeSeconds(connect));
    if (user != null && !user.isEmpty()) {
      ds.setUser(user);
    }
    // psql's variable, for operators who already have it set; ours wins when both are.
    String pw = password != null ? password : env.get("PGPASSWORD");
    if (pw != null) {
      ds.setPassword(pw);
    }
    return ds;
  }

  /** The URL without its query part, which may carry a password. */
  String shownUrl() {
    return url == null ? "(none)" : url.replaceFirst("\\?.*", "");
  }
}
