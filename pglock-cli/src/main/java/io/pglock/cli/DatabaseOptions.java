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
 * {@code --url}, {@code --user} and {@code --password}, each with an environment variable as its
 * default so that a password need not appear on a command line, where {@code ps} shows it.
 * pgjdbc itself reads {@code ~/.pgpass} (or {@code PGPASSFILE}) when no password is given.
 */
final class DatabaseOptions {
  @Spec(Spec.Target.MIXEE)
  private CommandSpec spec;

  @Option(names = "--url", paramLabel = "JDBC_URL", defaultValue = "${env:PGLOCK_URL}",
      description = "PostgreSQL to lock on, e.g. jdbc:postgresql://db.example:5432/app "
          + "(default: $PGLOCK_URL).")
  private String url;

  @Option(names = "--user", paramLabel = "USER", defaultValue = "${env:PGLOCK_USER}",
      description = "Database user (default: $PGLOCK_USER, else the URL's user=, else pgjdbc's default).")
  private String user;

  @Option(names = "--password", paramLabel = "PASSWORD", defaultValue = "${env:PGLOCK_PASSWORD}",
      description = "Database password; prefer $PGLOCK_PASSWORD (the default), $PGPASSWORD or ~/.pgpass, "
          + "which ps does not show.")
  private String password;

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
   * within the timeout ({@code statement_timeout}), and a connection attempt or a silent network
   * within a little more, so that a refresh of {@code pglock locks --watch} can never hang.
   *
   * @throws ParameterException as {@link #dataSource()}
   */
  DataSource readingDataSource(Duration timeout) {
    PGSimpleDataSource ds = pgDataSource(System.getenv());
    int seconds = (int) Math.max(1, (timeout.toMillis() + 999) / 1000);
    ds.setConnectTimeout(seconds);
    ds.setLoginTimeout(seconds);
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
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url);
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
