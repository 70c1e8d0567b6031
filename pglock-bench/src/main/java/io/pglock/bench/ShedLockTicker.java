package io.pglock.bench;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.provider.jdbc.JdbcLockProvider;

/**
 * ShedLock in B9, without Spring as its README's "Locking without a framework" shows: a
 * {@code DefaultLockingTaskExecutor} on the plain {@code JdbcLockProvider} (table {@value #TABLE}),
 * and a thread that fires at every whole second of the node's clock and runs the task through
 * {@code executeWithLock}. The node's clock, possibly skewed, is ShedLock's too
 * ({@code ClockProvider.setClock}): the lock's times and the firing times come from it, as they
 * would from a JVM whose system clock is off.
 *
 * <p>The next firing is the first whole second after the previous one ended, as Spring's
 * {@code CronTrigger} computes it: seconds that pass while a firing waits (for the database, say) are
 * not fired late.
 */
final class ShedLockTicker implements Ticker {
  /** The version in pom.xml (the shaded jar keeps no manifest to read it from). */
  static final String VERSION = "6.9.2";
  static final String TABLE = "shedlock";
  static final String LOCK = "tick";
  /**
   * ShedLock's README for a task of period P that should run once per period: lockAtMostFor and
   * lockAtLeastFor both a little under P (its example: 14 min for a task every 15 min).
   * lockAtLeastFor keeps the lock after a short run, so that a node whose clock or timer is a little
   * behind does not run the same firing again; lockAtMostFor is the safety net that frees the lock of
   * a node that died, much longer than the run (a few ms) and under the period so that a crash costs
   * no firing of the others.
   */
  static final Duration LOCK_AT_MOST_FOR = Duration.ofMillis(900);
  static final Duration LOCK_AT_LEAST_FOR = Duration.ofMillis(900);

  private final Clock clock;
  private final LockingTaskExecutor executor;
  private final SlotResults results;
  private final Thread thread;
  private volatile boolean closing;

  ShedLockTicker(DataSource dataSource, Clock clock, SlotResults results) {
    this.clock = clock;
    ClockProvider.setClock(clock);
    this.executor = new DefaultLockingTaskExecutor(new JdbcLockProvider(dataSource, TABLE));
    this.results = results;
    this.thread = new Thread(this::fire, "shedlock-ticker");
    this.thread.setDaemon(true);
  }

  /** The lock table, as ShedLock's README gives it for PostgreSQL. */
  static String ddl() {
    return "CREATE TABLE " + TABLE + " (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL,"
        + " locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))";
  }

  /** The settings in full, for the report. */
  static String settings() {
    return "shedlock-core and shedlock-provider-jdbc " + VERSION + ": DefaultLockingTaskExecutor on JdbcLockProvider (the plain JDBC one: node clocks, no usingDbTime) over a"
        + " HikariCP pool of 2, executeWithLock(task, new LockConfiguration(ClockProvider.now(), \"" + LOCK
        + "\", lockAtMostFor " + LOCK_AT_MOST_FOR.toMillis() + " ms, lockAtLeastFor " + LOCK_AT_LEAST_FOR.toMillis()
        + " ms)) at every whole second of the node's clock (ClockProvider.setClock; the next firing the first whole"
        + " second after the last one ended, as Spring's CronTrigger)";
  }

  @Override
  public void start() {
    thread.start();
  }

  private void fire() {
    Instant label = nextSecond(clock.instant());
    while (!closing) {
      if (!awaitClock(label)) {
        return;
      }
      Instant slot = label;
      try {
        executor.executeWithLock((Runnable) () -> results.record(slot),
            new LockConfiguration(ClockProvider.now(), LOCK, LOCK_AT_MOST_FOR, LOCK_AT_LEAST_FOR));
      } catch (RuntimeException e) {
        ContenderMain.out("ERROR firing " + slot + ": " + String.valueOf(e).replace('\n', ' '));
      }
      Instant now = clock.instant();
      label = nextSecond(now.isAfter(slot) ? now : slot);
    }
  }

  /** Paces the thread until the node's clock shows {@code at}; false if closing first. */
  private boolean awaitClock(Instant at) {
    while (!closing) {
      long nanos = Duration.between(clock.instant(), at).toNanos();
      if (nanos <= 0) {
        return true;
      }
      LockSupport.parkNanos(this, nanos); // close() unparks
    }
    return false;
  }

  private static Instant nextSecond(Instant after) {
    return after.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
  }

  @Override
  public void close() {
    closing = true;
    LockSupport.unpark(thread);
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
