package io.pglock.cli;

import io.pglock.PgLockSchema;
import io.pglock.PgLockException;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The database the demo runs on: a server given by JDBC URL, or an embedded PostgreSQL started
 * for the run and stopped by {@link #close()} (or, if the JVM exits first, by the shutdown hook
 * the embedded PostgreSQL registers itself). Either way it connects once before handing the
 * database out, so that a wrong URL or password fails at once with {@link UnreachableException}
 * rather than in the middle of a worker's walk. Not thread-safe; the data source it hands out is.
 */
final class DemoDatabase implements AutoCloseable {
  private final DataSource dataSource;
  private final String description;
  private final EmbeddedPostgres embedded;
  private final Console console;
  private boolean closed;

  private DemoDatabase(DataSource dataSource, String description, EmbeddedPostgres embedded, Console console) {
    this.dataSource = dataSource;
    this.description = description;
    this.embedded = embedded;
    this.console = console;
  }

  /**
   * A server reached by a {@code jdbc:postgresql:} URL; user and password may be null.
   *
   * @throws UnreachableException if a connection cannot be opened (host, port, database or login)
   */
  static DemoDatabase server(String url, String user, String password, Duration connectTimeout, Console console) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url);
    ds.setConnectTimeout(DatabaseOptions.wholeSeconds(connectTimeout));
    ds.setLoginTimeout(DatabaseOptions.wholeSeconds(connectTimeout));
    if (user != null) {
      ds.setUser(user);
    }
    if (password != null) {
      ds.setPassword(password);
    }
    // The query part may carry a password (?password=...): never print it.
    String shown = url.replaceFirst("\\?.*", "");
    try (Connection c = ds.getConnection()) {
      return new DemoDatabase(ds, shown, null, console);
    } catch (SQLException e) {
      // The driver's own message follows as the first "caused by" line.
      throw new UnreachableException("could not connect to " + shown + " (SQLState " + e.getSQLState()
          + "); check the host, port and database in --url, that the server accepts TCP connections, "
          + "--user and --password, and --connect-timeout on a slow network", e);
    }
  }

  /**
   * Starts an embedded PostgreSQL, telling the user, installs the pglock schema in it (so that
   * the demo can show the SQL function {@code pglock.key}; the server is thrown away at the end),
   * and returns it once it accepts connections.
   *
   * @throws UnreachableException if the server did not start or the schema could not be installed
   */
  static DemoDatabase embedded(Console console) {
    console.event("no --url given: starting an embedded PostgreSQL (the first run unpacks it: seconds, up to a "
        + "minute on a busy machine)");
    EmbeddedPostgres pg;
    try {
      pg = EmbeddedPostgres.builder().start();
    } catch (LinkageError e) {
      // pglock.jar without demo-lib/ beside it: the embedded PostgreSQL ships apart (see pglock-cli/pom.xml).
      throw new UnreachableException("the embedded PostgreSQL is not installed beside pglock.jar (its demo-lib/ "
          + "directory, built with the jar: ./pglock demo builds both); or point the demo at a server: "
          + "--url jdbc:postgresql://host:5432/db --user name", e);
    } catch (IOException | RuntimeException e) {
      throw new UnreachableException("the embedded PostgreSQL did not start (" + e.getMessage()
          + "); point the demo at a server instead: --url jdbc:postgresql://host:5432/db --user name", e);
    }
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(pg.getJdbcUrl("postgres", "postgres"));
    ds.setUser("postgres");
    try {
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
    } catch (PgLockException e) {
      closeQuietly(pg);
      throw new UnreachableException("the embedded PostgreSQL started but pglock could not use it ("
          + e.getMessage() + "); point the demo at a server instead: --url jdbc:postgresql://host:5432/db", e);
    }
    String description = "embedded PostgreSQL on port " + pg.getPort();
    console.event(description + " is ready");
    return new DemoDatabase(ds, description, pg, console);
  }

  /** Where the lock sessions connect; every connection is a new backend (no pooling). */
  DataSource dataSource() {
    return dataSource;
  }

  /** The URL, or a description of the embedded server. */
  String description() {
    return description;
  }

  /** Stops the embedded server, if there is one. Idempotent. */
  @Override
  public void close() {
    if (embedded == null || closed) {
      return;
    }
    closed = true;
    console.event("stopping the embedded PostgreSQL");
    try {
      embedded.close();
    } catch (IOException | RuntimeException e) {
      console.event("could not stop the embedded PostgreSQL cleanly: " + e);
    }
  }

  private static void closeQuietly(EmbeddedPostgres pg) {
    try {
      pg.close();
    } catch (IOException | RuntimeException e) {
      // Already failing with the more useful error; the shutdown hook retries the stop.
    }
  }

  /**
   * The database could not be reached: no connection to the server, a refused login, or an
   * embedded PostgreSQL that did not start. Exit code {@link ExitCodes#UNREACHABLE}.
   */
  static final class UnreachableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UnreachableException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
