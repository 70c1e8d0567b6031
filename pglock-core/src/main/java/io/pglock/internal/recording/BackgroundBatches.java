package io.pglock.internal.recording;

import io.pglock.PgLocksConfig;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;

/**
 * Writes records to the database off the callers' path, for the lock history and the names of
 * keys: callers queue records (no I/O, no lock, never a block), and a thread of its own writes them
 * in batches of one statement each, on a connection borrowed from the DataSource for that statement.
 *
 * <p>Why this shape: a record per lock grant must cost the caller next to nothing. The queue is
 * lock-free and bounded by a counter (a full queue drops the record); the thread is woken only when
 * it sleeps idle, never while it gathers a batch, since a wake-up per record would cost a context
 * switch per grant; and what fails is dropped with one warning (then DEBUG), never retried into an
 * unbounded backlog: these records are for operators.
 *
 * @param <T> a record
 */
final class BackgroundBatches<T> {
  /** Writes one batch on a borrowed connection. */
  interface Writer<T> {
    void write(Connection c, List<T> batch) throws SQLException;
  }

  /** Work on a borrowed connection. */
  interface ConnectionWork {
    void run(Connection c) throws SQLException;
  }

  private final PgLocksConfig config;
  private final Logger log;
  private final String what;
  private final int maxQueued;
  private final int maxBatch;
  private final long gatherNanos;
  private final Writer<T> writer;
  /** Told of a batch that could not be written (to forget what it recorded), may be null. */
  private final java.util.function.Consumer<List<T>> onFailure;
  /** Runs on the thread every {@link #periodNanos} (a sweep), may be null. */
  private final Runnable periodic;
  private final long periodNanos;
  private final ConcurrentLinkedQueue<T> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger queued = new AtomicInteger();
  private final Thread thread;
  private volatile boolean idle;
  private volatile boolean closed;
  private boolean warned;
  private long nextPeriodic;

  BackgroundBatches(PgLocksConfig config, Logger log, String what, String threadRole, int maxQueued, int maxBatch,
      long gatherMillis, Writer<T> writer, java.util.function.Consumer<List<T>> onFailure, Runnable periodic,
      long periodSeconds) {
    this.config = config;
    this.log = log;
    this.what = what;
    this.maxQueued = maxQueued;
    this.maxBatch = maxBatch;
    this.gatherNanos = TimeUnit.MILLISECONDS.toNanos(gatherMillis);
    this.writer = writer;
    this.onFailure = onFailure;
    this.periodic = periodic;
    this.periodNanos = TimeUnit.SECONDS.toNanos(periodSeconds);
    this.nextPeriodic = System.nanoTime() + periodNanos;
    this.thread = new Thread(this::run, "pglock-" + config.nodeName() + "-" + threadRole);
    this.thread.setDaemon(true);
  }

  BackgroundBatches<T> start() {
    thread.start();
    return this;
  }

  /** Queues a record. Never blocks. @return false if it was dropped (full, or closed) */
  boolean offer(T record) {
    if (closed || queued.incrementAndGet() > maxQueued) {
      queued.decrementAndGet();
      return false;
    }
    queue.add(record);
    if (idle) {
      idle = false;
      LockSupport.unpark(thread);
    }
    return true;
  }

  private void run() {
    List<T> batch = new ArrayList<>();
    while (!closed) {
      if (queue.isEmpty()) {
        idle = true;
        if (queue.isEmpty() && !closed) { // a record added before idle was set is seen here
          LockSupport.parkNanos(this, TimeUnit.SECONDS.toNanos(1));
        }
        idle = false;
      } else {
        // Gather for the window: records arriving meanwhile join this batch without waking anyone.
        long until = System.nanoTime() + gatherNanos;
        long left;
        while (queued.get() < maxBatch && (left = until - System.nanoTime()) > 0 && !closed) {
          LockSupport.parkNanos(this, left);
        }
        drain(batch);
        writeQuietly(batch);
        batch.clear();
      }
      if (periodic != null && System.nanoTime() - nextPeriodic >= 0 && !closed) {
        periodic.run();
        nextPeriodic = System.nanoTime() + periodNanos;
      }
    }
    drain(batch); // closed: one last batch of what is queued, bounded by the statement's network timeout
    if (!batch.isEmpty()) {
      writeQuietly(batch);
    }
  }

  private void drain(List<T> into) {
    T r;
    while (into.size() < maxBatch && (r = queue.poll()) != null) {
      queued.decrementAndGet();
      into.add(r);
    }
  }

  private void writeQuietly(List<T> batch) {
    try {
      withConnection(c -> writer.write(c, batch));
    } catch (SQLException | RuntimeException e) {
      if (onFailure != null) {
        onFailure.accept(batch);
      }
      failed("write " + batch.size() + " " + what, e);
    }
  }

  /** Runs work on a connection borrowed for it, with reads bounded by five connect timeouts. */
  void withConnection(ConnectionWork work) throws SQLException {
    try (Connection c = config.dataSource().getConnection()) {
      c.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis() * 5));
      work.run(c);
    }
  }

  /** Logs a failure: the first as a warning, the rest at DEBUG. Only the batch thread calls it. */
  void failed(String attempt, Exception e) {
    if (!warned) {
      warned = true;
      log.warn("could not {} ({}); further failures are logged at DEBUG", attempt, e.toString());
    } else {
      log.debug("could not {}: {}", attempt, e.toString());
    }
  }

  /** Stops taking records and asks the thread to write what it has, then stop. */
  void beginClose() {
    closed = true;
    LockSupport.unpark(thread);
  }

  /**
   * Waits for the thread's last batch until the deadline ({@link System#nanoTime()} scale).
   *
   * @return true if it finished in time
   */
  boolean awaitClosed(long deadlineNanos) {
    boolean interrupted = false;
    try {
      long left;
      while (thread.isAlive() && (left = deadlineNanos - System.nanoTime()) > 0) {
        try {
          thread.join(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          interrupted = true; // close() stays bounded; the interrupt stays set
        }
      }
      return !thread.isAlive();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
