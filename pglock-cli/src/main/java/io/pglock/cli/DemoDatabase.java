package io.pglock.cli;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The database the demo runs on: a server given by JDBC URL, or an embedded PostgreSQL started
 * for the run and stopped by {@link #close()} (or, if the JVM exits first, by the shutdown hook
 * the embedded PostgreSQL registers itself). Not thread-safe; the data source it hands out is.
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

  /** A server reached by a {@code jdbc:postgresql:} URL; user and password may be null. */
  static DemoDatabase server(String url, String user, String password, Console console) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url);
    if (user != null) {
      ds.setUser(user);
    }
    if (password != null) {
      ds.setPassword(password);
    }
    return new DemoDatabase(ds, url, null, console);
  }

  /**
   * Starts an embedded PostgreSQL, telling the user, and returns it once it accepts connections.
   *
   * @throws StartException if the server did not start
   */
  static DemoDatabase embedded(Console console) {
    console.event("no --url given: starting an embedded PostgreSQL (the first run unpacks it; a few seconds)");
    EmbeddedPostgres pg;
    try {
      pg = EmbeddedPostgres.builder().start();
    } catch (IOException | RuntimeException e) {
      throw new StartException("the embedded PostgreSQL did not start (" + e.getMessage()
          + "); point the demo at a server instead: --url jdbc:postgresql://host:5432/db --user name", e);
    }
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(pg.getJdbcUrl("postgres", "postgres"));
    ds.setUser("postgres");
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

  /** The embedded PostgreSQL could not be started. */
  static final class StartException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    StartException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
