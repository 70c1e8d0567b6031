package io.pglock.queue.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Vacuums the job table when autovacuum will not: the server's {@code autovacuum} setting off, or the
 * table's {@code autovacuum_enabled} storage parameter false. A queue turns over its rows all day
 * (each job is an insert, a claim, an outcome and a delete, every one leaving a dead row version):
 * with nothing vacuuming, pruning deletes rows but their space is never reused, and the table and its
 * indexes grow without end (docs/benchmarks.md, B17: 4.6 million dead rows after ten minutes).
 *
 * <p>A queue object's first pruning worker starts the checks ({@link #due()}): one every
 * {@link #CHECK_NANOS}, on a thread of their own, so that neither a check nor a long VACUUM holds up
 * a worker's claims. A check reads the table's statistics and vacuums when its
 * dead rows exceed both {@value #MIN_DEAD} and a tenth of its live rows, and it was not vacuumed
 * within the last minute. {@code VACUUM (SKIP_LOCKED)}: when another worker of the fleet (or an
 * operator) is vacuuming it already, this one skips at once instead of queueing behind it. Then
 * {@code ANALYZE} too, since autovacuum off also means no automatic statistics.
 *
 * <p>Only the table's owner, the database's owner or a superuser may vacuum it: a worker whose role is
 * none of these says so once, at WARN, and stops checking.
 */
final class JobTableVacuum implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(JobTableVacuum.class);
  static final long CHECK_NANOS = TimeUnit.SECONDS.toNanos(10);
  /** Between checks when autovacuum looks after the table: only the settings could change. */
  static final long AUTOVACUUM_ON_CHECK_NANOS = TimeUnit.MINUTES.toNanos(5);
  static final long MIN_DEAD = 10_000;
  static final double DEAD_FRACTION = 0.1;
  static final int SINCE_LAST_SECONDS = 60;
  /** A VACUUM of a large table runs for minutes, answering nothing meanwhile: the read waits this long. */
  static final int VACUUM_TIMEOUT_MILLIS = (int) TimeUnit.HOURS.toMillis(1);

  private final DataSource dataSource;
  private final String table;
  private final int timeoutMillis;
  private final AtomicBoolean started = new AtomicBoolean();
  private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "pglock-jobs-vacuum");
    t.setDaemon(true);
    return t;
  });
  /** Set when this role may not vacuum the table, or the queue closed: no more checks. */
  private volatile boolean off;
  /** The VACUUM under way, cancelled by close(). */
  private volatile Statement running;

  /**
   * @param table the job table, schema-qualified as the queue's statements name it
   * @param timeoutMillis the network timeout of the check's statements
   */
  JobTableVacuum(DataSource dataSource, String table, int timeoutMillis) {
    this.dataSource = dataSource;
    this.table = table;
    this.timeoutMillis = timeoutMillis;
  }

  /**
   * Called by a worker's I/O thread at each pruning round: the first call starts the checks, which then
   * come on their own thread, every {@link #CHECK_NANOS} (every {@link #AUTOVACUUM_ON_CHECK_NANOS} while
   * autovacuum looks after the table), until the queue closes. Never blocks.
   */
  void due() {
    if (started.compareAndSet(false, true)) {
      schedule(0);
    }
  }

  private void schedule(long delayNanos) {
    if (off) {
      return;
    }
    try {
      thread.schedule(() -> {
        long next = CHECK_NANOS;
        try {
          next = check();
        } catch (SQLException | RuntimeException e) {
          if (!off) {
            log.warn("job table {}: the vacuum check failed, next in {} s: {}", table,
                TimeUnit.NANOSECONDS.toSeconds(CHECK_NANOS), e.toString());
          }
        }
        schedule(next);
      }, delayNanos, TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      // the queue closed
    }
  }

  /**
   * One check, and the VACUUM if needed, each on a connection borrowed for it.
   *
   * @return nanoseconds until the next check
   */
  private long check() throws SQLException {
    Stats s = ShortCall.run(dataSource, timeoutMillis, this::stats);
    if (s == null || s.autovacuum) {
      return AUTOVACUUM_ON_CHECK_NANOS; // the table is gone, or autovacuum looks after it
    }
    if (!s.mayVacuum) {
      off = true;
      log.warn("job table {}: autovacuum is off for it, and this role may not vacuum it (only its owner, the"
          + " database's owner or a superuser may): dead rows of finished jobs accumulate and the table grows;"
          + " turn autovacuum on, or vacuum it regularly as its owner", table);
      return AUTOVACUUM_ON_CHECK_NANOS;
    }
    if (s.dead > Math.max(MIN_DEAD, DEAD_FRACTION * s.live) && s.sinceVacuumSeconds >= SINCE_LAST_SECONDS) {
      ShortCall.run(dataSource, VACUUM_TIMEOUT_MILLIS, c -> vacuum(c, s));
    }
    return CHECK_NANOS;
  }

  /** VACUUM runs outside any transaction: autocommit on for it, given back as it came. */
  private Void vacuum(Connection c, Stats s) throws SQLException {
    long t0 = System.nanoTime();
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(true);
    try (Statement st = c.createStatement()) {
      running = st;
      if (off) {
        return null; // closed meanwhile
      }
      st.execute("VACUUM (SKIP_LOCKED, ANALYZE) " + table);
      boolean skipped = false;
      for (SQLWarning w = st.getWarnings(); w != null; w = w.getNextWarning()) {
        skipped |= "55P03".equals(w.getSQLState()); // lock not available: another session vacuums it
      }
      log.info("job table {}: autovacuum is off for it; {} ({} dead and {} live rows)", table,
          skipped ? "another session is vacuuming it" : "vacuumed in "
              + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms", s.dead, s.live);
      return null;
    } finally {
      running = null;
      c.setAutoCommit(autoCommit);
    }
  }

  private record Stats(boolean autovacuum, boolean mayVacuum, long dead, long live, double sinceVacuumSeconds) {}

  /** {@return the table's statistics and settings, or null if it is not there} */
  private Stats stats(Connection c) throws SQLException {
    // who may vacuum (PostgreSQL 14-16): the table's owner, the database's owner, a superuser (who has
    // the privileges of every role)
    try (PreparedStatement ps = c.prepareStatement("SELECT current_setting('autovacuum')::boolean"
        + " AND coalesce((SELECT option_value::boolean FROM pg_options_to_table(t.reloptions)"
        + "   WHERE option_name = 'autovacuum_enabled'), true),"
        + " pg_has_role(t.relowner, 'USAGE') OR pg_has_role((SELECT datdba FROM pg_database"
        + "   WHERE datname = current_database()), 'USAGE'),"
        + " pg_stat_get_dead_tuples(t.oid), pg_stat_get_live_tuples(t.oid),"
        + " coalesce(extract(epoch FROM now() - greatest(pg_stat_get_last_vacuum_time(t.oid),"
        + "   pg_stat_get_last_autovacuum_time(t.oid))), 1e9)"
        + " FROM pg_class t WHERE t.oid = to_regclass(?)")) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new Stats(rs.getBoolean(1), rs.getBoolean(2), rs.getLong(3), rs.getLong(4), rs.getDouble(5))
            : null;
      }
    }
  }

  /**
   * Stops checking; a VACUUM under way is cancelled (the server keeps what it finished). Returns once
   * the check's connection is given back, within the network timeout: the queue's close leaves no
   * connection of its own open.
   */
  @Override
  public void close() {
    off = true;
    thread.shutdownNow();
    Statement st = running;
    if (st != null) {
      try {
        st.cancel();
      } catch (SQLException e) {
        log.debug("job table {}: cancelling the VACUUM failed: {}", table, e.toString());
      }
    }
    try {
      if (!thread.awaitTermination(timeoutMillis, TimeUnit.MILLISECONDS)) {
        log.warn("job table {}: the vacuum check did not end within {} ms of the queue's close", table, timeoutMillis);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
