package io.pglock.schedule.internal;

import io.pglock.LockHandle;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The loop's chores besides slots: finds runs whose runner is gone (a running row whose task lock
 * nobody holds) and marks or retries them; prunes the history. Loop thread only.
 */
final class Housekeeping {
  private static final Logger log = LoggerFactory.getLogger(Housekeeping.class);
  private static final int PRUNE_BATCH = 1000;

  private final SchedulerConnection db;
  private final RunTable table;
  private final String namespace;
  private final String node;
  private final Duration retention;
  private final SlotExecutor executor;
  private final BooleanSupplier closing;

  Housekeeping(SchedulerConnection db, RunTable table, String namespace, String node, Duration retention,
      SlotExecutor executor, BooleanSupplier closing) {
    this.db = db;
    this.table = table;
    this.namespace = namespace;
    this.node = node;
    this.retention = retention;
    this.executor = executor;
    this.closing = closing;
  }

  /** Finds running rows whose runner is gone (their task lock is free): marks them, and retries if the task says so. */
  void sweep(Map<String, TaskState> tasks) throws SQLException {
    if (tasks.isEmpty()) {
      return;
    }
    List<String> names = new ArrayList<>(tasks.keySet());
    for (RunTable.Running r : db.with(c -> table.running(c, namespace, names))) {
      TaskState ts = tasks.get(r.task());
      if (ts == null || ts.current != null) {
        continue; // this node runs it (or another slot of it): its lock is held here
      }
      Optional<LockHandle> h = ts.lock.tryAcquire();
      if (h.isEmpty()) {
        continue; // its runner holds the lock: alive
      }
      LockHandle handle = h.get();
      boolean handedOn = false;
      try {
        if (r.attempt() < ts.task.maxAttempts() && !ts.paused && !closing.getAsBoolean()) {
          Optional<Instant> startedAt = db.with(c -> table.retry(c, namespace, r, node, handle.fencingToken()));
          if (startedAt.isPresent()) {
            log.warn("scheduler {}: task {}: the runner {} of slot {} disconnected; running attempt {} here", node,
                r.task(), r.node(), r.slot(), r.attempt() + 1);
            executor.start(ts, handle, r.slot(), r.kind(), r.attempt() + 1, startedAt.get());
            handedOn = true;
          }
        } else if (db.with(c -> table.disconnected(c, namespace, r, node))) {
          log.warn("scheduler {}: task {}: the runner {} of slot {} disconnected mid-run; recorded as disconnected"
              + " (retryDisconnected allows {} attempt(s))", node, r.task(), r.node(), r.slot(),
              ts.task.maxAttempts());
        }
      } finally {
        if (!handedOn) {
          handle.close();
        }
      }
    }
  }

  /** Deletes finished rows older than the retention, in batches. */
  void prune() {
    try {
      int total = 0;
      for (int i = 0; i < 100; i++) {
        int n = db.with(c -> table.prune(c, namespace, retention, PRUNE_BATCH));
        total += n;
        if (n < PRUNE_BATCH || closing.getAsBoolean()) {
          break;
        }
      }
      if (total > 0) {
        log.debug("scheduler {}: pruned {} run(s) older than {}", node, total, retention);
      }
    } catch (SQLException e) {
      log.debug("scheduler {}: pruning the history failed: {}", node, e.toString());
    }
  }
}
