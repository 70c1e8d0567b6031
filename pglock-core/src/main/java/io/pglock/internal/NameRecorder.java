package io.pglock.internal;

import io.pglock.LockKey;
import io.pglock.PgLocksConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records the name of each named key once, so that {@code <schema>.locks} and every view built on it
 * show names, not numbers.
 *
 * <p>Off the hot path: a grant only looks the key up in a set and, the first time, queues it. A
 * thread of its own writes what is queued in batches (one statement, on a connection borrowed from
 * the DataSource for that statement), gathering names for a second first, so a slow or absent database delays
 * names, never locks. A batch that fails is dropped with one warning: names are for operators, and
 * the next grant of a key this process has not recorded queues it again.
 */
final class NameRecorder {
  private static final Logger log = LoggerFactory.getLogger(NameRecorder.class);
  /** Keys remembered as recorded; past this many the set starts over (a name may then be sent twice). */
  static final int MAX_REMEMBERED = 100_000;
  /** The most names one statement records. */
  static final int MAX_BATCH = 1_000;
  /** How long a batch gathers names after the first: at most one statement a second. */
  private static final long GATHER_MILLIS = 1_000;

  private final PgLocksConfig config;
  private final Set<LockKey> remembered = ConcurrentHashMap.newKeySet();
  private final LinkedBlockingQueue<LockKey> queue = new LinkedBlockingQueue<>(MAX_REMEMBERED);
  private final Thread writer;
  private volatile boolean closed;
  private boolean warned;

  private NameRecorder(PgLocksConfig config) {
    this.config = config;
    this.writer = new Thread(this::run, "pglock-" + config.nodeName() + "-names");
    this.writer.setDaemon(true);
  }

  /** Starts a recorder; call {@link #close()} when the instance closes. */
  static NameRecorder start(PgLocksConfig config) {
    NameRecorder r = new NameRecorder(config);
    r.writer.start();
    return r;
  }

  /** Queues the key's name if this process has not recorded it yet. Never blocks. */
  void record(LockKey key) {
    if (key.space() != LockKey.KeySpace.NAME || closed || remembered.contains(key)) {
      return;
    }
    if (remembered.size() >= MAX_REMEMBERED) {
      remembered.clear();
    }
    if (remembered.add(key) && !queue.offer(key)) {
      remembered.remove(key); // the queue is full: a later grant tries again
    }
  }

  private void run() {
    List<LockKey> batch = new ArrayList<>();
    try {
      while (!closed) {
        LockKey first = queue.take();
        batch.add(first);
        // gather what else comes within a second, so that a burst of new names is one statement
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GATHER_MILLIS);
        long left;
        while (batch.size() < MAX_BATCH && (left = until - System.nanoTime()) > 0) {
          LockKey next = queue.poll(left, TimeUnit.NANOSECONDS);
          if (next != null) {
            batch.add(next);
          }
        }
        write(batch);
        batch.clear();
      }
    } catch (InterruptedException e) {
      // closed
    }
  }

  private void write(List<LockKey> batch) {
    String[] namespaces = new String[batch.size()];
    String[] names = new String[batch.size()];
    for (int i = 0; i < namespaces.length; i++) {
      namespaces[i] = batch.get(i).namespace();
      names[i] = batch.get(i).name();
    }
    try (Connection c = config.dataSource().getConnection()) {
      c.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis() * 5));
      try (PreparedStatement ps = c.prepareStatement(Sql.recordNames(config.schema()))) {
        ps.setArray(1, c.createArrayOf("text", namespaces));
        ps.setArray(2, c.createArrayOf("text", names));
        ps.execute();
      }
    } catch (SQLException | RuntimeException e) {
      batch.forEach(remembered::remove);
      if (!warned) {
        warned = true;
        log.warn("could not record {} lock names in {}.lock_name ({}); views show their keys instead. Further "
            + "failures are logged at DEBUG", batch.size(), config.schema(), e.toString());
      } else {
        log.debug("could not record {} lock names: {}", batch.size(), e.toString());
      }
    }
  }

  /** Stops the writer; names still queued are not written. */
  void close() {
    closed = true;
    writer.interrupt();
  }
}
