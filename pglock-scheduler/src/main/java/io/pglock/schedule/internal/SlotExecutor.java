package io.pglock.schedule.internal;

import io.pglock.LockHandle;
import io.pglock.schedule.MissedSlots;
import io.pglock.schedule.RunKind;
import io.pglock.schedule.RunState;
import io.pglock.schedule.SchedulerListener;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out a task's slot decisions on the loop thread: asks {@link SlotPlanner} what is due,
 * records skips, claims slots (the task's lock, then the run row) and starts their runs. It
 * decides nothing about policies itself; it only learns from the database whether a claim or a
 * skip took, and resolves a slot only once the slot has a row.
 */
final class SlotExecutor {
  private static final Logger log = LoggerFactory.getLogger(SlotExecutor.class);
  /** Another node holds the task's lock to claim this very slot: look again this soon. */
  private static final long BUSY_RETRY_NANOS = 20_000_000L;
  /** The database says the slot has not come yet (this node woke a little early). */
  private static final long EARLY_RETRY_NANOS = 2_000_000L;
  static final long ERROR_RETRY_NANOS = 1_000_000_000L;

  /** What claiming a slot came to. */
  enum Outcome {
    /** The row is ours and its run started here. */
    STARTED,
    /** The slot has a row already: someone ran, runs or skipped it. */
    TAKEN,
    /** A run that started before the slot still goes (elsewhere): its runner decides about the slot. */
    OVERLAP,
    /** Only runs that started after the slot go: the slot waits for them. */
    QUEUED,
    /** The lock is taken and no run goes: another node is claiming; look again in a moment. */
    BUSY,
    /** The slot has not come yet by the database's clock. */
    EARLY,
    /**
     * The lock is free after a wait behind another node's run: nothing was claimed, the waiting
     * slots are to be decided again ({@link SlotPlanner#afterWait}).
     */
    WAITED,
    /** A statement failed. */
    ERROR
  }

  /** The loop's services the executor uses. */
  interface Loop {
    /** Measures the database's clock again (this node's estimate was off). */
    void measureOffset() throws SQLException;

    /** True once the scheduler closes: no new run starts. */
    boolean closing();

    /** Wakes the loop (a run ended). */
    void wake();
  }

  private final SchedulerConnection db;
  private final RunTable table;
  private final DbClock dbClock;
  private final String namespace;
  private final String node;
  private final Duration pollInterval;
  private final ExecutorService runs;
  private final ScheduledExecutorService watchdog;
  private final Clock clock;
  private final Queue<RunEnded> ended;
  private final Set<RunExecution> active;
  /** The user's listener behind a guard; null when none was set. */
  private final SchedulerListener listener;
  private final Loop loop;

  SlotExecutor(SchedulerConnection db, RunTable table, DbClock dbClock, String namespace, String node,
      Duration pollInterval, ExecutorService runs, ScheduledExecutorService watchdog, Clock clock,
      Queue<RunEnded> ended, Set<RunExecution> active, SchedulerListener listener, Loop loop) {
    this.db = db;
    this.table = table;
    this.dbClock = dbClock;
    this.namespace = namespace;
    this.node = node;
    this.pollInterval = pollInterval;
    this.runs = runs;
    this.watchdog = watchdog;
    this.clock = clock;
    this.ended = ended;
    this.active = active;
    this.listener = listener;
    this.loop = loop;
  }

  /**
   * One pass over a task: its manual trigger, then its due slots. Returns when (database clock)
   * it next needs the loop, or null if only a poll, a run's end or a retry time moves it on.
   */
  Instant process(TaskState ts) throws SQLException {
    Instant manual = ts.pendingManual;
    if (manual != null && due(ts.manualRetryAt)) {
      ts.manualRetryAt = 0;
      Outcome o = attempt(ts, manual, RunKind.MANUAL);
      if (o == Outcome.OVERLAP && ts.current != null) {
        o = Outcome.QUEUED; // a manual run waits for this node's run, whatever the overlap policy
      }
      if (o == Outcome.STARTED || o == Outcome.TAKEN) {
        if (o == Outcome.STARTED) {
          log.debug("scheduler {}: task {} triggered by hand ({})", node, ts.task.name(), manual);
        }
        db.with(c -> table.takeTrigger(c, namespace, ts.task.name(), manual));
        ts.pendingManual = null;
      } else {
        ts.manualRetryAt = System.nanoTime() + retryDelay(o);
        // no return: the slots that come while the trigger waits are decided as they come
      }
    }
    if (ts.paused) {
      return null;
    }
    if (ts.task.schedule().fromPreviousEnd()) {
      return due(ts.retryAt) ? processDelay(ts) : null;
    }
    return processSlots(ts);
  }

  private static boolean due(long retryAt) {
    return retryAt == 0 || System.nanoTime() - retryAt >= 0;
  }

  /** Decides the slots due (every pass, so a slot is classified when it comes), then works the head. */
  private Instant processSlots(TaskState ts) throws SQLException {
    Instant now = dbClock.now();
    ts.pruneSpans();
    List<SlotPlanner.Decision> decided = SlotPlanner.plan(ts.task.schedule(), ts.policy, ts.decidedUpTo, now, ts.spans);
    if (!decided.isEmpty()) {
      ts.pending.addAll(decided);
      ts.decidedUpTo = decided.get(decided.size() - 1).slot();
    }
    boolean more = decided.size() == SlotPlanner.MAX_SCAN;
    Instant next = more ? now : ts.task.schedule().next(ts.decidedUpTo).orElse(null);
    if (!due(ts.retryAt)) {
      return next;
    }
    ts.retryAt = 0;
    while (!ts.pending.isEmpty()) {
      SlotPlanner.Decision head = ts.pending.peekFirst();
      if (head.action() == SlotPlanner.Action.SKIP_MISSED || head.action() == SlotPlanner.Action.SKIP_OVERLAP) {
        if (!skipHead(ts, head.action())) {
          return next;
        }
        continue;
      }
      Outcome o = attempt(ts, head.slot(), head.action() == SlotPlanner.Action.CATCH_UP ? RunKind.CATCH_UP
          : RunKind.SCHEDULED);
      if (o == Outcome.STARTED || o == Outcome.TAKEN) {
        resolve(ts);
        continue;
      }
      if (o == Outcome.WAITED) {
        next = redecide(ts);
        continue;
      }
      if (o == Outcome.OVERLAP) {
        // the run that went when the slot came: once the lock is free, its row says whether it covered the slot
        ts.waitedBehind.addAll(db.with(c -> table.runningBefore(c, namespace, ts.task.name(), head.slot())));
      }
      ts.retryAt = System.nanoTime() + retryDelay(o);
      return next;
    }
    return next;
  }

  /**
   * The lock is free after a wait behind another node's run: every unresolved slot is decided
   * again by {@link SlotPlanner#afterWait}, with the runs waited behind as their rows now read.
   * Returns when the loop is next needed.
   */
  private Instant redecide(TaskState ts) {
    List<SlotPlanner.OtherRun> others = ts.waitedOn;
    ts.waitedOn = List.of();
    Instant now = dbClock.now();
    List<SlotPlanner.Decision> again = SlotPlanner.afterWait(ts.task.schedule(), ts.policy, ts.resolvedUpTo, now,
        ts.spans, others);
    ts.spans.addAll(SlotPlanner.covering(others)); // later passes count them too
    ts.pending.clear();
    ts.pending.addAll(again);
    ts.decidedUpTo = again.isEmpty() ? ts.resolvedUpTo : again.get(again.size() - 1).slot();
    log.debug("scheduler {}: task {}: the lock is free after a wait behind another node's run ({}); {} slot(s)"
        + " decided again", node, ts.task.name(), others, again.size());
    return again.size() == SlotPlanner.MAX_SCAN ? now : ts.task.schedule().next(ts.decidedUpTo).orElse(null);
  }

  private static void resolve(TaskState ts) {
    ts.resolvedUpTo = ts.pending.pollFirst().slot();
  }

  /**
   * Records the skips at the head of the plan (one statement). A slot the database did not record
   * (its clock says it was not missed yet: this node's estimate is ahead, or the server's clock
   * stepped back) is not passed: it and every later decision are dropped and decided again.
   * Returns true if the head moved on.
   */
  private boolean skipHead(TaskState ts, SlotPlanner.Action action) throws SQLException {
    List<Instant> slots = new ArrayList<>();
    List<Duration> lateness = new ArrayList<>();
    for (SlotPlanner.Decision d : ts.pending) {
      if (d.action() != action) {
        break;
      }
      slots.add(d.slot());
      lateness.add(action == SlotPlanner.Action.SKIP_OVERLAP ? Duration.ZERO
          : SlotPlanner.lateness(ts.task.schedule(), ts.policy, d.slot()));
    }
    String detail = action == SlotPlanner.Action.SKIP_OVERLAP
        ? "overlap: the previous run was still going (Overlap.SKIP)"
        : "missed: not started within its lateness of " + describeLateness(ts) + " (" + ts.task.missedSlots() + ")";
    Set<Instant> present = db.with(c -> table.skip(c, namespace, ts.task.name(), slots, lateness,
        RunKind.SCHEDULED, node, detail));
    int resolved = 0;
    for (Instant slot : slots) {
      if (!present.contains(RunTable.micros(slot))) {
        break;
      }
      resolve(ts);
      resolved++;
    }
    if (resolved > 0) {
      // an operator's event, not an error: DEBUG (README: nothing at INFO); the rows say it too
      log.debug("scheduler {}: task {}: {} slot(s) from {} to {} skipped ({})", node, ts.task.name(), resolved,
          slots.get(0), slots.get(resolved - 1), action == SlotPlanner.Action.SKIP_OVERLAP ? "overlap" : "missed");
    }
    if (resolved < slots.size()) {
      log.debug("scheduler {}: task {}: the database did not record slot {} as skipped (not missed by its clock);"
          + " deciding it again", node, ts.task.name(), slots.get(resolved));
      ts.replan();
      loop.measureOffset();
      ts.retryAt = System.nanoTime() + EARLY_RETRY_NANOS;
      return false;
    }
    return true;
  }

  private static String describeLateness(TaskState ts) {
    return ts.policy.missedAfter().map(Duration::toString)
        .orElse("min(" + io.pglock.schedule.Task.DEFAULT_MISSED_AFTER + ", the time to the next slot)");
  }

  /** A fixed delay: the next slot follows the latest run's end; nothing while it runs. */
  private Instant processDelay(TaskState ts) throws SQLException {
    if (ts.current != null) {
      return null;
    }
    RunTable.Latest latest = ts.delayLatest;
    Instant next;
    if (latest == null) {
      next = ts.firstSlot;
    } else if (latest.state() == RunState.RUNNING) {
      return null; // someone runs it: the poll sees it end
    } else {
      next = ts.task.schedule().next(latest.finishedAt().orElse(latest.slot())).orElse(null);
    }
    Instant now = dbClock.now();
    if (next == null || next.isAfter(now)) {
      return next;
    }
    Duration lateness = SlotPlanner.lateness(ts.task.schedule(), ts.policy, next);
    boolean missed = SlotPlanner.missed(next, lateness, now);
    if (missed && ts.task.missedSlots() == MissedSlots.SKIP) {
      Instant slot = next;
      Set<Instant> present = db.with(c -> table.skip(c, namespace, ts.task.name(), List.of(slot), List.of(lateness),
          RunKind.SCHEDULED, node, "missed: not started within " + lateness + " of its time (SKIP)"));
      if (present.isEmpty()) {
        loop.measureOffset(); // not missed by the database's clock: decided again at the next pass
        ts.retryAt = System.nanoTime() + EARLY_RETRY_NANOS;
        return null;
      }
      ts.delayLatest = db.with(c -> table.latest(c, namespace, ts.task.name())).orElse(null);
      return now;
    }
    Outcome o = attempt(ts, next, missed ? RunKind.CATCH_UP : RunKind.SCHEDULED);
    if (o == Outcome.TAKEN) {
      ts.delayLatest = db.with(c -> table.latest(c, namespace, ts.task.name())).orElse(null);
      return now;
    }
    if (o != Outcome.STARTED) {
      ts.retryAt = System.nanoTime() + retryDelay(o);
    }
    return null;
  }

  /** How long to leave a slot after an outcome that did not resolve it. */
  private long retryDelay(Outcome o) {
    switch (o) {
      case BUSY:
        return BUSY_RETRY_NANOS;
      case EARLY:
        try {
          loop.measureOffset(); // woke early: the estimate of the database's clock is off
          return EARLY_RETRY_NANOS;
        } catch (SQLException e) {
          return ERROR_RETRY_NANOS;
        }
      case OVERLAP:
      case QUEUED:
        // queued behind a run: this node's own run wakes the loop when it ends; another's, the poll
        return pollInterval.toNanos();
      default:
        return ERROR_RETRY_NANOS;
    }
  }

  /** Takes the task's lock, then inserts the slot's row; runs it if both succeed. */
  Outcome attempt(TaskState ts, Instant slot, RunKind kind) {
    String name = ts.task.name();
    if (loop.closing()) {
      return Outcome.ERROR; // no new run once closing: its row could not be run
    }
    Optional<LockHandle> h;
    try {
      h = ts.lock.tryAcquire();
    } catch (RuntimeException e) {
      log.warn("scheduler {}: task {}: could not take its lock for slot {}: {}", node, name, slot, e.toString());
      return Outcome.ERROR;
    }
    try {
      if (h.isEmpty()) {
        if (db.with(c -> table.slotState(c, namespace, name, slot)).isPresent()) {
          return Outcome.TAKEN;
        }
        return switch (db.with(c -> table.going(c, namespace, name, slot))) {
          case NONE -> Outcome.BUSY;
          case STARTED_BEFORE -> Outcome.OVERLAP;
          case STARTED_AFTER -> Outcome.QUEUED;
        };
      }
      LockHandle handle = h.get();
      if (kind != RunKind.MANUAL && !ts.waitedBehind.isEmpty()) {
        // the runs waited behind no longer hold the lock: read how their rows end before deciding again
        try {
          List<SlotPlanner.OtherRun> others = new ArrayList<>();
          for (RunTable.RunRef r : ts.waitedBehind) {
            db.with(c -> table.otherRun(c, namespace, name, r)).ifPresent(others::add);
          }
          ts.waitedBehind.clear();
          ts.waitedOn = others;
        } finally {
          handle.close();
        }
        return Outcome.WAITED;
      }
      RunTable.Claimed claim;
      try {
        claim = db.with(c -> table.claim(c, namespace, name, slot, kind, 1, node, handle.fencingToken()));
      } catch (SQLException | RuntimeException e) {
        claim = afterLostReply(ts, handle, slot, e);
        if (claim == null) {
          handle.close();
          throw e;
        }
      }
      if (claim.claim() != RunTable.Claim.CLAIMED) {
        handle.close();
        return claim.claim() == RunTable.Claim.TAKEN ? Outcome.TAKEN : Outcome.EARLY;
      }
      start(ts, handle, slot, kind, 1, claim.startedAt());
      if (kind != RunKind.MANUAL && !ts.task.schedule().fromPreviousEnd()) {
        noteNextSlot(ts, slot);
      }
      return Outcome.STARTED;
    } catch (SQLException | RuntimeException e) {
      log.warn("scheduler {}: task {}: could not claim slot {}: {}", node, name, slot, e.toString());
      return Outcome.ERROR;
    }
  }

  /**
   * The claim's statement failed, perhaps after its insert committed (the answer lost on the way
   * back): while still holding the lock, read the slot's row once more. CLAIMED if it is ours (our
   * fencing token, with its started_at), TAKEN if another's, null if it cannot be told (the lock is
   * then released; a row of ours left behind is swept as disconnected).
   */
  private RunTable.Claimed afterLostReply(TaskState ts, LockHandle handle, Instant slot, Exception failure) {
    try {
      Optional<Long> token = db.with(c -> table.slotToken(c, namespace, ts.task.name(), slot));
      if (token.isEmpty()) {
        return null;
      }
      if (token.get() != handle.fencingToken()) {
        return new RunTable.Claimed(RunTable.Claim.TAKEN, null);
      }
      Optional<Instant> startedAt = db.with(c -> table.startedAt(c, namespace, ts.task.name(), slot));
      return startedAt.isEmpty() ? null : new RunTable.Claimed(RunTable.Claim.CLAIMED, startedAt.get());
    } catch (SQLException | RuntimeException e) {
      log.debug("scheduler {}: task {}: the slot {} cannot be read after its claim failed ({}): {}", node,
          ts.task.name(), slot, failure, e.toString());
      return null;
    }
  }

  /** Notes the slot after this one for operators (pglock tasks); best effort. */
  private void noteNextSlot(TaskState ts, Instant slot) {
    try {
      Instant next = ts.task.schedule().next(slot).orElse(null);
      db.with(c -> {
        table.nextSlot(c, namespace, ts.task.name(), next);
        return null;
      });
    } catch (SQLException | RuntimeException e) {
      log.debug("scheduler {}: task {}: could not note the next slot: {}", node, ts.task.name(), e.toString());
    }
  }

  /**
   * Starts the run of a row that is ours, on a run thread; the lock goes with it. The run's span
   * (what it covers as an overlap) is the row's own {@code started_at} and {@code finished_at}, the
   * times other nodes read ({@link RunTable#going}), not this node's estimate of the clock.
   *
   * @param startedAt the row's {@code started_at}, as the claim or the retry returned it
   */
  void start(TaskState ts, LockHandle handle, Instant slot, RunKind kind, int attempt, Instant startedAt) {
    String name = ts.task.name();
    RunExecution run = new RunExecution(ts.task, handle, slot, kind, attempt, node, new RunExecution.Ending() {
      /** The row's finished_at, if this run recorded its end (written and read on the run thread). */
      private Instant finishedAt;

      @Override
      public boolean record(RunExecution r, RunState state, String detail, Throwable error) throws Exception {
        Optional<Instant> at = db.with(c -> table.finish(c, namespace, name, slot, handle.fencingToken(), state,
            detail, error));
        at.ifPresent(t -> finishedAt = t);
        return at.isPresent();
      }

      @Override
      public void ended(RunExecution r) {
        // run thread: nothing of the task's state is touched here; the loop applies the event. An
        // end not recorded (the row no longer ours, the database away) has only this node's estimate.
        active.remove(r);
        ended.add(new RunEnded(ts, r, finishedAt != null ? finishedAt : dbClock.now()));
        loop.wake();
        if (listener != null) {
          listener.runEnded(namespace, name, kind, r.outcome(), r.ranNanos(),
              Duration.between(slot, startedAt).toNanos());
        }
      }
    }, watchdog, clock.instant());
    ts.runStarted(run, startedAt);
    active.add(run);
    log.debug("scheduler {}: task {} runs slot {} ({}, attempt {}, token {})", node, name, slot, kind, attempt,
        handle.fencingToken());
    try {
      runs.execute(run);
    } catch (RejectedExecutionException e) {
      active.remove(run);
      Instant end = dbClock.now();
      try { // closing: the row is ours and will not run; say so while the lock is still held
        end = db.with(c -> table.finish(c, namespace, name, slot, handle.fencingToken(), RunState.INTERRUPTED,
            "the scheduler closed before the run started", null)).orElse(end);
      } catch (SQLException | RuntimeException ex) {
        log.debug("scheduler {}: task {}: could not record slot {} as not started: {}", node, name, slot,
            ex.toString());
      } finally {
        ts.runEnded(run, end);
        handle.close();
      }
    }
  }

  /** Applies the ends that run threads reported: loop thread only. */
  void applyEnded() {
    RunEnded e;
    while ((e = ended.poll()) != null) {
      e.task().runEnded(e.run(), e.at());
      if (e.task().task.schedule().fromPreviousEnd()) {
        // the poll reads the end from the row
        e.task().delayLatest = new RunTable.Latest(e.run().slot(), RunState.RUNNING, Optional.empty());
      }
    }
  }

}
