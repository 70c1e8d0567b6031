package io.pglock.internal.recording;

import io.pglock.PgLocksConfig;
import io.pglock.internal.Sql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the lock history: a hold's start and end are queued by the caller and written in batches
 * of one statement ({@code <schema>.record_holds}) by {@link BackgroundBatches}.
 *
 * <p>The same statement closes as {@code disconnected} the open holds of the batch's keys whose
 * holder backend is gone: the holder died, and the node that next takes the lock notices. A sweep
 * every {@value #SWEEP_EVERY_SECONDS} s does the same for every key, and prunes, in batches of
 * {@value #PRUNE_BATCH}, the holds that ended longer ago than the retention.
 *
 * <p>The queue holds at most {@value #MAX_QUEUED} records; a full queue drops new ones (counted in
 * {@link #dropped()}).
 *
 * <p>Public (with what the engine calls) only for the engine in {@code io.pglock.internal}; not API.
 */
public final class HistoryWriter {
  private static final Logger log = LoggerFactory.getLogger(HistoryWriter.class);
  /** About 20,000 x (a few hundred bytes, up to 9 KB with an error and its stack): bounded memory. */
  static final int MAX_QUEUED = 20_000;
  static final int MAX_BATCH = 2_000;
  /** How long a batch gathers records after the first: a burst of holds is one statement. */
  static final long GATHER_MILLIS = 100;
  static final long SWEEP_EVERY_SECONDS = 60;
  static final int PRUNE_BATCH = 1_000;

  private final PgLocksConfig config;
  private final AtomicLong dropped = new AtomicLong();
  private final BackgroundBatches<HoldRecord> batches;

  private HistoryWriter(PgLocksConfig config) {
    this.config = config;
    this.batches = new BackgroundBatches<>(config, log, "lock history records in " + config.schema()
        + ".lock_history", "history", MAX_QUEUED, MAX_BATCH, GATHER_MILLIS,
        (c, batch) -> write(c, batch, config.schema()), null, this::sweep, SWEEP_EVERY_SECONDS);
  }

  /**
   * Starts the writer's thread.
   *
   * @return the running writer
   */
  public static HistoryWriter start(PgLocksConfig config) {
    HistoryWriter w = new HistoryWriter(config);
    w.batches.start();
    return w;
  }

  /** Queues a hold's state. Never blocks. */
  public void submit(HoldRecord r) {
    if (!batches.offer(r)) {
      dropped.incrementAndGet();
    }
  }

  /** Records dropped because the queue was full or the writer closed. */
  long dropped() {
    return dropped.get();
  }

  private static void write(Connection c, List<HoldRecord> batch, String schema) throws SQLException {
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
    try (PreparedStatement ps = c.prepareStatement(Sql.recordHolds(schema))) {
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
  }

  private void sweep() {
    try {
      batches.withConnection(c -> {
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
        } while (pruned == PRUNE_BATCH); // small batches: never one long delete
      });
    } catch (SQLException | RuntimeException e) {
      batches.failed("sweep the lock history in " + config.schema() + ".lock_history", e);
    }
  }

  private static String timestamp(Instant t) {
    return t == null ? null : t.toString();
  }

  /** Stops taking records and asks for the last batch (the one gathered and what is queued). */
  public void beginClose() {
    batches.beginClose();
  }

  /**
   * Waits for the last batch until the deadline ({@link System#nanoTime()} scale): a process that
   * exits right after {@code PgLocks.close()} keeps its last holds' records.
   *
   * @return true if it was written in time
   */
  public boolean awaitClosed(long deadlineNanos) {
    return batches.awaitClosed(deadlineNanos);
  }
}
