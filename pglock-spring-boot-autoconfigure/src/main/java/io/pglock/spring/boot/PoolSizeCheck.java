package io.pglock.spring.boot;

import java.lang.reflect.Method;
import java.util.OptionalInt;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the connections pglock keeps borrowed from the application's pool and warns at start when
 * the pool leaves the application too few: a lock session, the wait sessions, the scheduler's
 * connection, each queue worker's claim session and the queue's LISTEN connection are held for the
 * life of the context, and a pool they exhaust blocks the application's own requests.
 */
final class PoolSizeCheck {
  private static final Logger log = LoggerFactory.getLogger(PoolSizeCheck.class);
  /** Connections left to the application below which pglock warns. */
  static final int APPLICATION_MINIMUM = 2;

  private PoolSizeCheck() {}

  /**
   * Warns when the pool is too small.
   *
   * @param dataSource the pool pglock borrows from
   * @param held what pglock keeps borrowed, with a description of each part
   * @return the warning logged, or null if none
   */
  static String check(DataSource dataSource, int held, String breakdown) {
    OptionalInt size = maximumPoolSize(dataSource);
    if (size.isEmpty()) {
      log.info("pglock keeps up to {} connections of the DataSource borrowed ({})", held, breakdown);
      return null;
    }
    int max = size.getAsInt();
    if (max - held >= APPLICATION_MINIMUM) {
      log.info("pglock keeps up to {} of the pool's {} connections borrowed ({})", held, max, breakdown);
      return null;
    }
    String warning = "pglock keeps up to " + held + " of the pool's " + max + " connections borrowed (" + breakdown
        + "), leaving the application " + Math.max(0, max - held) + "; raise spring.datasource.hikari.maximum-pool-size"
        + " to at least " + (held + APPLICATION_MINIMUM + 8) + ", or give pglock a DataSource of its own"
        + " (define a PgLocks bean)";
    log.warn(warning);
    return warning;
  }

  /** The pool's maximum size, for HikariCP (read reflectively: HikariCP is optional). */
  static OptionalInt maximumPoolSize(DataSource dataSource) {
    try {
      Class<?> hikari = Class.forName("com.zaxxer.hikari.HikariDataSource", false, dataSource.getClass().getClassLoader());
      Object pool = hikari.isInstance(dataSource) ? dataSource
          : dataSource.isWrapperFor(hikari) ? dataSource.unwrap(hikari) : null;
      if (pool == null) {
        return OptionalInt.empty();
      }
      Method m = hikari.getMethod("getMaximumPoolSize");
      return OptionalInt.of((Integer) m.invoke(pool));
    } catch (ReflectiveOperationException | java.sql.SQLException | LinkageError e) {
      return OptionalInt.empty();
    }
  }
}
