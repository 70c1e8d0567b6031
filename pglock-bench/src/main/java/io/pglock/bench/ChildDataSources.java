package io.pglock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.Map;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Data sources of a child JVM (a B8 contender or a B9 node) from its {@code url} and {@code user}
 * options; a password comes in the environment variable {@code PGLOCK_BENCH_PASSWORD}, never on
 * the command line.
 */
final class ChildDataSources {
  private ChildDataSources() {}

  /** A plain, unpooled data source: what pglock's sessions are given. */
  static PGSimpleDataSource simple(Map<String, String> opts) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(opts.get("url"));
    if (!opts.getOrDefault("user", "").isEmpty()) {
      ds.setUser(opts.get("user"));
    }
    String password = password();
    if (password != null) {
      ds.setPassword(password);
    }
    return ds;
  }

  /**
   * A HikariCP pool (what Spring Boot gives an application) of {@code size} connections, named
   * {@code name} in {@code application_name} so that the parent can find its backends; HikariCP's
   * defaults otherwise (a borrow waits up to 30 s for a connection).
   */
  static HikariDataSource pool(Map<String, String> opts, String name, int size) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(opts.get("url"));
    if (!opts.getOrDefault("user", "").isEmpty()) {
      c.setUsername(opts.get("user"));
    }
    String password = password();
    if (password != null) {
      c.setPassword(password);
    }
    c.setMaximumPoolSize(size);
    c.setPoolName(name);
    c.addDataSourceProperty("ApplicationName", name);
    return new HikariDataSource(c);
  }

  private static String password() {
    String password = System.getenv("PGLOCK_BENCH_PASSWORD");
    return password == null || password.isEmpty() ? null : password;
  }
}
