package io.pglock.internal;

import io.pglock.LockKey;
import io.pglock.PgLocksConfig;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records the name of each named key once, so that {@code <schema>.locks} and every view built on it
 * show names, not numbers.
 *
 * <p>Off the hot path: a grant only looks the key up in a set and, the first time, queues it for
 * {@link BackgroundBatches}, which gathers names for a second and writes them as one statement, so
 * a slow or absent database delays names, never locks. A batch that fails is forgotten: the next
 * grant of one of its keys queues it again.
 */
final class NameRecorder {
  private static final Logger log = LoggerFactory.getLogger(NameRecorder.class);
  /** Keys remembered as recorded; past this many the set starts over (a name may then be sent twice). */
  static final int MAX_REMEMBERED = 100_000;
  /** The most names one statement records. */
  static final int MAX_BATCH = 1_000;
  /** How long a batch gathers names after the first: at most one statement a second. */
  private static final long GATHER_MILLIS = 1_000;

  private final Set<LockKey> remembered = ConcurrentHashMap.newKeySet();
  private final BackgroundBatches<LockKey> batches;

  private NameRecorder(PgLocksConfig config) {
    this.batches = new BackgroundBatches<>(config, log, "lock names in " + config.schema() + ".lock_name", "names",
        MAX_REMEMBERED, MAX_BATCH, GATHER_MILLIS, (c, batch) -> write(c, batch, config.schema()),
        batch -> batch.forEach(remembered::remove), null, 0);
  }

  /** Starts a recorder; call {@link #close()} when the instance closes. */
  static NameRecorder start(PgLocksConfig config) {
    NameRecorder r = new NameRecorder(config);
    r.batches.start();
    return r;
  }

  /** Queues the key's name if this process has not recorded it yet. Never blocks. */
  void record(LockKey key) {
    if (key.space() != LockKey.KeySpace.NAME || remembered.contains(key)) {
      return;
    }
    if (remembered.size() >= MAX_REMEMBERED) {
      remembered.clear();
    }
    if (remembered.add(key) && !batches.offer(key)) {
      remembered.remove(key); // full or closed: a later grant tries again
    }
  }

  private static void write(java.sql.Connection c, List<LockKey> batch, String schema) throws java.sql.SQLException {
    String[] namespaces = new String[batch.size()];
    String[] names = new String[batch.size()];
    for (int i = 0; i < namespaces.length; i++) {
      namespaces[i] = batch.get(i).namespace();
      names[i] = batch.get(i).name();
    }
    try (PreparedStatement ps = c.prepareStatement(Sql.recordNames(schema))) {
      ps.setArray(1, c.createArrayOf("text", namespaces));
      ps.setArray(2, c.createArrayOf("text", names));
      ps.execute();
    }
  }

  /** Stops taking names and asks for the last batch of what is queued; {@link #awaitClosed} waits. */
  void beginClose() {
    batches.beginClose();
  }

  /**
   * Waits for the last batch until the deadline ({@link System#nanoTime()} scale), so that
   * {@code PgLocks.close()} returns with no connection of a pool still on loan.
   *
   * @return true if it finished in time
   */
  boolean awaitClosed(long deadlineNanos) {
    return batches.awaitClosed(deadlineNanos);
  }
}
