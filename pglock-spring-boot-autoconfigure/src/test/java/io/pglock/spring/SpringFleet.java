package io.pglock.spring;

import io.pglock.testing.TestDatabase;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.DefaultResourceLoader;

/**
 * Real application contexts of one test app, as nodes of a fleet: each starts with Boot's own
 * DataSource auto-configuration (a HikariCP pool on the test database) and pglock's starter. The
 * pool's connections carry the application name {@code <node>-pool}, pglock's sessions
 * {@code pglock:<node>:...}, so that a test looks only at the backends it opened.
 */
final class SpringFleet {
  private SpringFleet() {}

  /** {@return a namespace no other test run uses} */
  static String namespace(String test) {
    return test + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /**
   * Starts a node.
   *
   * @param app the test app's configuration class
   * @param namespace the fleet's namespace
   * @param node the node's name
   * @param properties more properties, {@code key=value}
   * @return the running context
   */
  static ConfigurableApplicationContext start(Class<?> app, String namespace, String node, String... properties) {
    return new SpringApplicationBuilder(app).web(WebApplicationType.NONE)
        .properties(properties(namespace, node, properties)).run();
  }

  /**
   * Starts a node as a servlet web application, on an embedded server at a free port
   * ({@code local.server.port} tells which).
   *
   * @param app the test app's configuration class
   * @param classLoader the context's class loader, such as a {@code FilteredClassLoader} that hides a
   *     library from the auto-configuration's conditions; null for the default
   * @param namespace the fleet's namespace
   * @param node the node's name
   * @param properties more properties, {@code key=value}
   * @return the running context
   */
  static ConfigurableApplicationContext startWeb(Class<?> app, ClassLoader classLoader, String namespace, String node,
      String... properties) {
    SpringApplicationBuilder b = new SpringApplicationBuilder(app).web(WebApplicationType.SERVLET)
        .properties(properties(namespace, node, properties)).properties("server.port=0");
    if (classLoader != null) {
      b.resourceLoader(new DefaultResourceLoader(classLoader));
    }
    return b.run();
  }

  /** {@return the base URI of a web node's server} */
  static URI uri(ConfigurableApplicationContext web) {
    return URI.create("http://127.0.0.1:" + web.getEnvironment().getProperty("local.server.port") + "/");
  }

  private static String[] properties(String namespace, String node, String... properties) {
    TestDatabase db = TestDatabase.get();
    List<String> props = new ArrayList<>(List.of(
        "spring.datasource.url=" + db.jdbcUrl(),
        "spring.datasource.hikari.data-source-properties.ApplicationName=" + node + "-pool",
        "spring.datasource.hikari.maximum-pool-size=12",
        "spring.datasource.hikari.connection-timeout=30000",
        "pglock.namespace=" + namespace,
        "pglock.node-name=" + node,
        "spring.main.banner-mode=off",
        // Flyway and Liquibase are on the test class path for their own tests; this app does not use them
        "spring.flyway.enabled=false",
        "spring.liquibase.enabled=false"));
    if (db.user() != null) {
      props.add("spring.datasource.username=" + db.user());
    }
    if (db.password() != null) {
      props.add("spring.datasource.password=" + db.password());
    }
    props.addAll(List.of(properties));
    return props.toArray(String[]::new);
  }

  /**
   * The advisory locks held by a node's backends (its pool and pglock's sessions), and those
   * backends that are still connected.
   *
   * @param node the node's name
   * @return one line per backend still connected, with the number of advisory locks it holds
   */
  static List<String> backends(String node) throws SQLException {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("""
            SELECT a.application_name, a.pid,
                   (SELECT count(*) FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory') AS locks
              FROM pg_stat_activity a
             WHERE a.application_name = ? OR a.application_name LIKE ?
            """)) {
      ps.setString(1, node + "-pool");
      ps.setString(2, "pglock:" + node + ":%");
      List<String> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1) + " pid " + rs.getInt(2) + " advisory locks " + rs.getLong(3));
        }
      }
      return out;
    }
  }
}
