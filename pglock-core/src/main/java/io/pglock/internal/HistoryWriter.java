package io.pglock.internal;

import io.pglock.PgLocksConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the lock history: a hold's start and end are queued by the caller (no I/O) and written by
 * a thread of its own, in batches of one statement ({@code <schema>.record_holds}), on a connection
 * borrowed from the DataSource for that statement.
 *
 * <p>The same statement closes as {@code disconnected} the open holds of the batch's keys whose
 * holder backend is gone: the holder died, and the node that next takes the lock notices. A sweep
 * every {@value #SWEEP_EVERY_SECONDS} s does the same for every key, and prunes, in batches of
 * {@value #PRUNE_BATCH}, the holds that ended longer ago than the retention.
 *
 * <p>History is for operators: a batch that cannot be written is dropped with one warning (then at
 * DEBUG), never retried into an unbounded backlog; the queue holds at most
 * {@value #MAX_QUEUED} records, and a full queue drops new ones (counted in {@link #dropped()}).
 */
final class HistoryWriter {
  private static final Logger log = LoggerFactory.getLogger(HistoryWriter.class);
  /** About 20,000 x (a few hundred bytes, up to 9 KB with an error and its stack): bounded memory. */
  static final int MAX_QUEUED = 20_000;
  static final int MAX_BATCH = 2_000;
  /** How long a batch gathers records after the first: a burst of holds is one statement. */
  static final long GATHER_MILLIS = 100;
  static final long SWEEP_EVERY_SECONDS = 60;
  static final int PRUNE_BATCH = 1_000;

  private final PgLocksConfig config;
  /**
   * Lock-free, so that a {@code run} never contends with the writer; counted separately to bound it.
   * The writer is woken only when it sleeps idle ({@link #idle}), never while it gathers a batch:
   * a wake-up per record would cost a context switch per hold.
   */
  private final ConcurrentLinkedQueue<HoldRecord> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger queued = new AtomicInteger();
  private volatile boolean idle;
  private final AtomicLong dropped = new AtomicLong();
  private final Thread writer;
  private volatile boolean closed;
  private boolean warned;
  private long nextSweep;

  private HistoryWriter(PgLocksConfig config) {
    this.config = config;
    this.writer = new Thread(this::run, "pglock-" + config.nodeName() + "-history");
    this.writer.setDaemon(true);
  }

  static HistoryWriter start(PgLocksConfig config) {
    HistoryWriter w = new HistoryWriter(config);
    w.nextSweep = System.nanoTime() + TimeUnit.SECONDS.toNanos(SWEEP_EVERY_SECONDS);
    w.writer.start();
    return w;
  }

  /** Queues a hold's state. Never blocks. */
  void submit(HoldRecord r) {
    if (closed || queued.incrementAndGet() > MAX_QUEUED) {
      queued.decrementAndGet();
      dropped.incrementAndGet();
      return;
    }
    queue.add(r);
    if (idle) {
      idle = false;
      LockSupport.unpark(writer);
    }
  }

  /** Records dropped because the queue was full or the writer closed. */
  long dropped() {
    return dropped.get();
  }

  private void run() {
    List<HoldRecord> batch = new ArrayList<>();
    while (!closed) {
      if (queue.isEmpty()) {
        idle = true;
        if (queue.isEmpty() && !closed) { // a record added before idle was set is seen here
          LockSupport.parkNanos(this, TimeUnit.SECONDS.toNanos(1));
        }
        idle = false;
      } else {
        // Gather for the window: records arriving meanwhile join this batch without waking anyone.
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GATHER_MILLIS);
        long left;
        while (queued.get() < MAX_BATCH && (left = until - System.nanoTime()) > 0 && !closed) {
          LockSupport.parkNanos(this, left);
        }
        drain(batch, MAX_BATCH);
        write(batch);
        batch.clear();
      }
      if (System.nanoTime() - nextSweep >= 0 && !closed) {
        sweep();
        nextSweep = System.nanoTime() + TimeUnit.SECONDS.toNanos(SWEEP_EVERY_SECONDS);
      }
    }
    drainOnClose();
  }

  private void drain(List<HoldRecord> into, int max) {
    HoldRecord r;
    while (into.size() < max && (r = queue.poll()) != null) {
      queued.decrementAndGet();
      into.add(r);
    }
  }

  /** At close, one last batch of what is still queued (bounded by the network timeout of its statement). */
  private void drainOnClose() {
    List<HoldRecord> rest = new ArrayList<>();
    drain(rest, MAX_BATCH);
    if (!rest.isEmpty()) {
      write(rest);
    }
  }

  private void write(List<HoldRecord> batch) {
    // the newest state of each hold: a start and an end in one batch would otherwise collide
    Map<Long, HoldRecord> newest = new LinkedHashMap<>();
    for (HoldRecord r : batch) {
      newest.put(r.id(), r);
    }
    int n = newest.size();
    Long[] id = new Long[n];
    String[] namespace = new String[n];
    String[] name = new String[n];
    Long[] key = new Long[n];
    String[] node = new String[n];
    Integer[] pid = new Integer[n];
    // Instants travel as ISO-8601 text in UTC: pgjdbc writes a Timestamp[] in the JVM's zone without
    // an offset, which the server would read in the session's zone.
    String[] backendStart = new String[n];
    String[] acquiredAt = new String[n];
    String[] releasedAt = new String[n];
    String[] outcome = new String[n];
    String[] lossCause = new String[n];
    String[] errorClass = new String[n];
    String[] errorMessage = new String[n];
    String[] errorStack = new String[n];
    int i = 0;
    for (HoldRecord r : newest.values()) {
      id[i] = r.id();
      namespace[i] = r.namespace();
      name[i] = r.name();
      key[i] = r.key();
      node[i] = r.node();
      pid[i] = r.pid();
      backendStart[i] = timestamp(r.backendStart());
      acquiredAt[i] = timestamp(r.acquiredAt());
      releasedAt[i] = timestamp(r.releasedAt());
      outcome[i] = r.outcome();
      lossCause[i] = r.lossCause();
      errorClass[i] = r.errorClass();
      errorMessage[i] = r.errorMessage();
      errorStack[i] = r.errorStack();
      i++;
    }
    try (Connection c = config.dataSource().getConnection()) {
      c.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis() * 5));
      try (PreparedStatement ps = c.prepareStatement(Sql.recordHolds(config.schema()))) {
        ps.setArray(1, c.createArrayOf("bigint", id));
        ps.setArray(2, c.createArrayOf("text", namespace));
        ps.setArray(3, c.createArrayOf("text", name));
        ps.setArray(4, c.createArrayOf("bigint", key));
        ps.setArray(5, c.createArrayOf("text", node));
        ps.setArray(6, c.createArrayOf("integer", pid));
        ps.setArray(7, c.createArrayOf("text", backendStart));
        ps.setArray(8, c.createArrayOf("text", acquiredAt));
        ps.setArray(9, c.createArrayOf("text", releasedAt));
        ps.setArray(10, c.createArrayOf("text", outcome));
        ps.setArray(11, c.createArrayOf("text", lossCause));
        ps.setArray(12, c.createArrayOf("text", errorClass));
        ps.setArray(13, c.createArrayOf("text", errorMessage));
        ps.setArray(14, c.createArrayOf("text", errorStack));
        ps.execute();
      }
    } catch (SQLException | RuntimeException e) {
      failed("write " + n + " lock history records", e);
    }
  }

  private void sweep() {
    try (Connection c = config.dataSource().getConnection()) {
      c.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis() * 5));
      String before = Instant.now().minus(config.historyRetention()).toString();
      int pruned;
      do {
        try (PreparedStatement ps = c.prepareStatement(Sql.sweepHolds(config.schema()))) {
          ps.setString(1, before);
          ps.setInt(2, PRUNE_BATCH);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            pruned = rs.getInt(2);
          }
        }
      } while (pruned == PRUNE_BATCH && !closed); // small batches: never one long delete
    } catch (SQLException | RuntimeException e) {
      failed("sweep the lock history", e);
    }
  }

  private static String timestamp(Instant t) {
    return t == null ? null : t.toString();
  }

  private void failed(String what, Exception e) {
    if (!warned) {
      warned = true;
      log.warn("could not {} in {}.lock_history ({}); further failures are logged at DEBUG", what, config.schema(),
          e.toString());
    } else {
      log.debug("could not {}: {}", what, e.toString());
    }
  }

  /**
   * Stops taking records and asks the writer to write what it has (the batch it gathers and what is
   * queued) and stop; {@link #awaitClosed} waits for that.
   */
  void beginClose() {
    closed = true;
    LockSupport.unpark(writer);
  }

  /**
   * Waits for the writer's last batch until the deadline ({@link System#nanoTime()} scale): a
   * process that exits right after {@code PgLocks.close()} keeps its last holds' records.
   *
   * @return true if the writer finished in time
   */
  boolean awaitClosed(long deadlineNanos) {
    boolean interrupted = false;
    try {
      long left;
      while (writer.isAlive() && (left = deadlineNanos - System.nanoTime()) > 0) {
        try {
          writer.join(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          interrupted = true; // close() stays bounded; the interrupt stays set
        }
      }
      return !writer.isAlive();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
