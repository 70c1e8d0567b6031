package io.pglock.bench;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;

/**
 * One system in B10's queue burn-down ({@link B10BurnDown}): a queue of no-op jobs, filled before the
 * clock starts, then run by {@code workers} workers as fast as the system goes. B10 calls, once each
 * and in this order: {@link #prepare}, {@link #burnDown}, {@link #tables} (for the dead tuples and
 * size, read after {@code burnDown} returned, when its sessions are closed), and {@link #close}
 * (always, even after a failure).
 *
 * <p>A contender is built for one run with the database ({@link Db}) and the worker count. Its
 * sessions carry an {@code application_name} of {@link Db#hikari} or {@link Db#connect} that starts
 * with {@link B10BurnDown#sessionPrefix}, so that B10 can wait for them to end: a backend flushes its
 * table statistics when it exits, so {@code pg_stat_user_tables} is complete only then.
 */
interface BurnDownContender extends AutoCloseable {
  /** For the table: the system and its version, e.g. {@code db-scheduler 16.7.1}. */
  String name();

  /** True for the peers, whose figures fill the baseline column; false for pglock's own queues. */
  boolean peer();

  /** Its settings in full, one line, for the notes. */
  String settings();

  /**
   * {@return why it cannot run here ("not run: ..."), or null if it can} A contender that needs
   * something outside the JVM (graphile-worker: Node and its packages) says so here, and B10 reports
   * the reason in its row instead of an error.
   */
  default String notRun() {
    return null;
  }

  /**
   * {@return a connection to the database that holds its {@link #tables} and its sessions, for a peer
   * in a database of its own (graphile-worker), owned by the contender and open from {@link #prepare}
   * to {@link #close}; null (the default) for B10's own database}
   */
  default Connection monitor() {
    return null;
  }

  /**
   * Creates its tables (in a schema of its own) and puts {@code jobs} no-op jobs in the queue, due
   * now, with no worker running yet. Not timed; may take a while (it is a bulk insert).
   */
  void prepare(int jobs) throws Exception;

  /**
   * Starts the workers and returns when every job is recorded done in the system's own tables, then
   * stops the workers and closes its connections (not timed). Each contender says in its comment how
   * it sees "done". Throws if no job is handled for {@code stall} (a stuck queue, not a slow one).
   */
  BurnDown burnDown(Duration stall) throws Exception;

  /**
   * The tables that hold its jobs, schema-qualified, for the dead tuples and size after the
   * burn-down; empty where such a figure means nothing (no table of its own).
   */
  List<String> tables();

  /** Drops what {@link #prepare} created and stops whatever still runs. */
  @Override
  void close() throws Exception;

  /**
   * What one burn-down took, each from the call that starts the workers ({@code System.nanoTime()}).
   *
   * @param jobs jobs in the queue
   * @param handled calls of the no-op handler (more than {@code jobs}: some job ran twice)
   * @param firstHandled until the first job's handler ran: the system's start-up latency
   * @param lastHandled until the last job's handler ran
   * @param done until every job was recorded done in the system's tables: the measured time
   * @param longestPause the longest time between two handler calls, one after the other
   * @param pauses how many times that was {@link BurnDownProgress#PAUSE} or more: workers idle while
   *     jobs waited, typically for a poll
   * @param paused those pauses added up
   */
  record BurnDown(int jobs, int handled, Duration firstHandled, Duration lastHandled, Duration done,
      Duration longestPause, int pauses, Duration paused) {
    double jobsPerSecond() {
      return jobs / (done.toNanos() / 1e9);
    }
  }
}
