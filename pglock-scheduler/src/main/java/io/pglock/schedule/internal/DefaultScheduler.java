package io.pglock.schedule.internal;

import io.pglock.LockHandle;
import io.pglock.LockSessionException;
import io.pglock.PgLocks;
import io.pglock.PgLocksConfig;
import io.pglock.SchemaMissingException;
import io.pglock.SessionLock;
import io.pglock.schedule.MissedSlots;
import io.pglock.schedule.Overlap;
import io.pglock.schedule.RunKind;
import io.pglock.schedule.RunState;
import io.pglock.schedule.Scheduler;
import io.pglock.schedule.Task;
import io.pglock.schedule.TaskAdmin;
import io.pglock.schedule.TaskRun;
import io.pglock.schedule.TaskStatus;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler of one node: a loop thread that wakes at each slot (by the database's clock as
 * measured from here), claims it, and starts its run on a run thread; polls the tasks' flags
 * (pauses, manual triggers); sweeps for disconnected runs; prunes the history. See
 * {@link Scheduler} and {@code docs/scheduling.md}.
 */
public final class DefaultScheduler implements Scheduler {
  static final Logger log = LoggerFactory.getLogger(DefaultScheduler.class);
  /** Slots looked at per task per pass: a longer gap is worked through over several passes. */
  private static final int MAX_SCAN = 1000;
  /** Another node holds the task's lock to claim this very slot: look again this soon. */
  private static final long BUSY_RETRY_NANOS = 20_000_000L;
  /** The database says the slot has not come yet (this node woke a little early). */
  private static final long EARLY_RETRY_NANOS = 2_000_000L;
  private static final long ERROR_RETRY_NANOS = 1_000_000_000L;
  private static final long OFFSET_EVERY_NANOS = 30_000_000_000L;
  private static final long PRUNE_EVERY_NANOS = 600_000_000_000L;
  private static final int PRUNE_BATCH = 1000;

  private final PgLocks locks;
  private final PgLocksConfig config;
  private final String namespace;
  private final String node;
  private final Duration pollInterval;
  private final Duration sweepInterval;
  private final Duration retention;
  private final Duration closeTimeout;
  private final Clock clock;
  private final DbClock dbClock;
  private final RunTable table;
  private final SchedulerConnection db;
  private final TaskAdmin admin;
  private final Map<String, TaskState> tasks = new ConcurrentHashMap<>();
  private final Thread thread;
  private final ExecutorService runs;
  private final ScheduledExecutorService watchdog;
  private final Object monitor = new Object();
  private boolean started; // guarded by monitor
  private boolean closing; // guarded by monitor
  private boolean woken; // guarded by monitor

  /** One registered task: its lock, and where the loop is with its slots. */
  private static final class TaskState {
    final Task task;
    final SessionLock lock;
    /** Every slot up to this one is resolved (claimed by someone, or skipped). Loop thread only. */
    Instant lastSlot;
    /** For a fixed delay: the latest row, refreshed at each poll and after this node's runs. */
    volatile RunTable.Latest delayLatest;
    /** For a fixed delay that never ran: its first slot, the task's first registration (database clock). */
    Instant firstSlot;
    volatile boolean paused;
    volatile Instant pendingManual;
    /** Slots planned and not yet resolved, oldest first, each with its kind. Loop thread only. */
    final java.util.ArrayDeque<Planned> plan = new java.util.ArrayDeque<>();
    volatile RunExecution current;
    /** System.nanoTime() before which the loop leaves it alone; 0 for none. Cleared when a run here ends. */
    volatile long retryAt;

    TaskState(Task task, SessionLock lock) {
      this.task = task;
      this.lock = lock;
    }
  }

  /** A slot to claim, and why. */
  private record Planned(Instant slot, RunKind kind) {}

  /**
   * What claiming a slot came to. OVERLAP: a run that started before the slot still goes (the
   * overlap policy decides); QUEUED: only later-started runs go, the slot waits for them whatever
   * the policy.
   */
  private enum Outcome { STARTED, TAKEN, OVERLAP, QUEUED, BUSY, EARLY, ERROR }

  public DefaultScheduler(PgLocks locks, Duration pollInterval, Duration sweepInterval, Duration retention,
      Duration closeTimeout, Duration networkTimeout, Clock clock) {
    this.locks = locks;
    this.config = locks.config();
    this.namespace = config.namespace();
    this.node = config.nodeName();
    this.pollInterval = pollInterval;
    this.sweepInterval = sweepInterval;
    this.retention = retention;
    this.closeTimeout = closeTimeout;
    this.clock = clock;
    this.dbClock = new DbClock();
    this.table = new RunTable(config.schema());
    this.db = new SchedulerConnection(config.dataSource(), (int) networkTimeout.toMillis());
    this.admin = TaskAdmin.of(config.dataSource(), config.schema(), namespace);
    String prefix = "pglock-" + node + "-scheduler";
    this.thread = new Thread(this::loop, prefix);
    this.thread.setDaemon(true);
    AtomicInteger n = new AtomicInteger();
    this.runs = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, prefix + "-run-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    this.watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, prefix + "-deadlines");
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public Scheduler register(Task task) {
    String name = task.name();
    synchronized (monitor) {
      if (closing) {
        throw new IllegalStateException("the scheduler is closed: cannot register task " + name);
      }
      if (tasks.containsKey(name)) {
        throw new IllegalStateException("task \"" + name + "\" is registered on this scheduler already");
      }
    }
    TaskState ts = new TaskState(task, locks.lock(lockName(name)).withFencing());
    try {
      db.with(c -> {
        table.register(c, namespace, name, task.schedule().describe(), node);
        return null;
      });
      measureOffset();
      Optional<RunTable.Latest> latest = db.with(c -> table.latest(c, namespace, name));
      // A new task starts now: nothing before its registration is missed.
      ts.lastSlot = latest.map(RunTable.Latest::slot).orElse(dbClock.now());
      ts.delayLatest = latest.orElse(null);
      // Every node must compute the same first slot of a fixed delay, or each would claim its own.
      ts.firstSlot = db.with(c -> table.created(c, namespace, name));
    } catch (SQLException e) {
      throw failure("register task " + name, e);
    }
    synchronized (monitor) {
      if (tasks.putIfAbsent(name, ts) != null) {
        throw new IllegalStateException("task \"" + name + "\" is registered on this scheduler already");
      }
      wake();
    }
    log.debug("scheduler {}: registered {}", node, task);
    return this;
  }

  static String lockName(String task) {
    return "task:" + task;
  }

  private RuntimeException failure(String what, SQLException e) {
    if ("42P01".equals(e.getSQLState()) || "3F000".equals(e.getSQLState())) {
      return new SchemaMissingException("the task tables of schema \"" + config.schema() + "\" are missing: they need"
          + " pglock's schema at version 8 or later; run PgLockSchema.migrate(dataSource, \"" + config.schema()
          + "\")");
    }
    return new LockSessionException("could not " + what + ": " + e.getMessage() + " (SQLSTATE " + e.getSQLState()
        + ")", e);
  }

  @Override
  public void start() {
    synchronized (monitor) {
      if (started || closing) {
        return;
      }
      started = true;
    }
    thread.start();
  }

  @Override
  public void pause(String task) {
    admin.pause(task, node);
    wake();
  }

  @Override
  public void resume(String task) {
    admin.resume(task, node);
    wake();
  }

  @Override
  public void trigger(String task) {
    admin.trigger(task, node);
    wake();
  }

  @Override
  public List<TaskStatus> tasks() {
    return admin.tasks(5);
  }

  @Override
  public List<TaskRun> runs(String task, int limit) {
    return admin.runs(task, limit);
  }

  /** Wakes the loop: a pause, a trigger, a run that ended, a new task. It polls right away. */
  private void wake() {
    synchronized (monitor) {
      woken = true;
      monitor.notifyAll();
    }
  }

  private boolean isClosing() {
    synchronized (monitor) {
      return closing;
    }
  }

  /** Measures the database's clock, timing only the statement (not the wait for the connection). */
  private void measureOffset() throws SQLException {
    db.with(c -> {
      try {
        dbClock.measure(() -> table.now(c));
      } catch (SQLException | RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
      return null;
    });
  }

  private void loop() {
    long now = System.nanoTime();
    long nextOffset = now;
    long nextPoll = now;
    long nextSweep = now + jitter(sweepInterval);
    long nextPrune = now + jitter(Duration.ofNanos(PRUNE_EVERY_NANOS)) / 10;
    while (!isClosing()) {
      try {
        now = System.nanoTime();
        if (now - nextOffset >= 0 || !dbClock.measured()) {
          measureOffset();
          nextOffset = now + OFFSET_EVERY_NANOS;
        }
        boolean poll = now - nextPoll >= 0 || takeWoken();
        if (poll) {
          poll();
          nextPoll = System.nanoTime() + pollInterval.toNanos();
        }
        if (now - nextSweep >= 0) {
          sweep();
          nextSweep = System.nanoTime() + jitter(sweepInterval);
        }
        if (now - nextPrune >= 0) {
          prune();
          nextPrune = System.nanoTime() + jitter(Duration.ofNanos(PRUNE_EVERY_NANOS));
        }
        long wakeAt = Math.min(nextPoll, nextSweep);
        for (TaskState ts : tasks.values()) {
          if (isClosing()) {
            break;
          }
          Instant due;
          try {
            due = process(ts);
          } catch (SQLException | RuntimeException e) {
            // one task's trouble (its schedule threw, a statement failed) does not hold up the others
            log.warn("scheduler {}: task {}: {}; trying again in a second", node, ts.task.name(), e.toString());
            ts.retryAt = System.nanoTime() + ERROR_RETRY_NANOS;
            due = null;
          }
          long at = due == null ? wakeAt : System.nanoTime() + dbClock.until(due).toNanos();
          if (ts.retryAt != 0) {
            at = Math.min(at, ts.retryAt);
          }
          wakeAt = Math.min(wakeAt, at);
        }
        awaitWake(wakeAt);
      } catch (SQLException | RuntimeException e) {
        log.warn("scheduler {}: {}; trying again in a second", node, e.toString());
        awaitWake(System.nanoTime() + ERROR_RETRY_NANOS);
      } catch (Error e) {
        log.error("scheduler {}: the scheduler's thread failed; this node no longer runs tasks", node, e);
        throw e;
      }
    }
  }

  private boolean takeWoken() {
    synchronized (monitor) {
      boolean w = woken;
      woken = false;
      return w;
    }
  }

  private void awaitWake(long deadline) {
    synchronized (monitor) {
      while (!closing && !woken) {
        long nanos = deadline - System.nanoTime();
        if (nanos <= 0) {
          return;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(monitor, nanos);
        } catch (InterruptedException e) {
          // not interruptible: the conditions decide
        }
      }
    }
  }

  /** Reads the flags (pause, trigger) of every task, and the latest row of fixed-delay tasks. */
  private void poll() throws SQLException {
    if (tasks.isEmpty()) {
      return;
    }
    List<String> names = new ArrayList<>(tasks.keySet());
    Map<String, RunTable.Flags> flags = db.with(c -> table.flags(c, namespace, names));
    for (TaskState ts : tasks.values()) {
      RunTable.Flags f = flags.get(ts.task.name());
      if (f == null) {
        continue;
      }
      ts.paused = f.paused();
      // A trigger stays in the table until a manual row for it exists (whoever inserted it), so a
      // node that closes or dies before running it loses nothing: another node takes it.
      ts.pendingManual = f.triggeredAt().orElse(null);
      if (ts.task.schedule().fromPreviousEnd() && ts.current == null) {
        ts.delayLatest = db.with(c -> table.latest(c, namespace, ts.task.name())).orElse(null);
      }
    }
  }

  /**
   * Resolves the task's due slots; returns when (database clock) it next needs the loop, or null
   * if only a poll or a retry will move it on.
   */
  private Instant process(TaskState ts) throws SQLException {
    if (ts.retryAt != 0) {
      if (System.nanoTime() - ts.retryAt < 0) {
        return null;
      }
      ts.retryAt = 0;
    }
    Instant manual = ts.pendingManual;
    if (manual != null) {
      Outcome o = attempt(ts, manual, RunKind.MANUAL);
      if (o == Outcome.OVERLAP && ts.current != null) {
        o = Outcome.QUEUED; // a manual run waits for this node's run, whatever the overlap policy
      }
      if (o == Outcome.STARTED || o == Outcome.TAKEN) {
        if (o == Outcome.STARTED) {
          log.info("scheduler {}: task {} triggered by hand ({})", node, ts.task.name(), manual);
        }
        db.with(c -> table.takeTrigger(c, namespace, ts.task.name(), manual));
        ts.pendingManual = null;
      } else if (retryLater(ts, o)) {
        return null;
      }
    }
    if (ts.paused) {
      return null;
    }
    return ts.task.schedule().fromPreviousEnd() ? processDelay(ts) : processSlots(ts);
  }

  private Instant processSlots(TaskState ts) throws SQLException {
    Task task = ts.task;
    Instant now = dbClock.now();
    if (ts.plan.isEmpty() && !plan(ts, now)) {
      return task.schedule().next(ts.lastSlot).orElse(null);
    }
    // Claim the planned slots in order; a slot's kind was decided once, when it was planned, so a
    // slot that waits (behind a run) is neither reclassified nor passed by a later one.
    while (!ts.plan.isEmpty()) {
      Planned p = ts.plan.peekFirst();
      Outcome o = attempt(ts, p.slot(), p.kind());
      if (o == Outcome.OVERLAP && ts.current != null) {
        // This node's own run holds the task lock: it alone decides about the slot. (A node that
        // merely sees a running row may be looking at a runner that died and was not swept yet.)
        if (p.kind() == RunKind.SCHEDULED && task.overlap() == Overlap.SKIP) {
          db.with(c -> table.skip(c, namespace, task.name(), List.of(p.slot()), p.kind(), node,
              "overlap: the previous run was still going (Overlap.SKIP)", Duration.ZERO));
          o = Outcome.TAKEN;
        } else {
          o = Outcome.QUEUED;
        }
      }
      if (o == Outcome.STARTED || o == Outcome.TAKEN) {
        ts.plan.pollFirst();
        ts.lastSlot = p.slot();
        continue;
      }
      retryLater(ts, o);
      return null;
    }
    return task.schedule().next(ts.lastSlot).orElse(null);
  }

  /**
   * Plans the slots due since the last one resolved: records the missed ones the policy skips, and
   * queues the others, oldest first, each with its kind. False if none is due.
   */
  private boolean plan(TaskState ts, Instant now) throws SQLException {
    Task task = ts.task;
    List<Instant> due = new ArrayList<>();
    Optional<Instant> s = task.schedule().next(ts.lastSlot);
    while (s.isPresent() && !s.get().isAfter(now) && due.size() < MAX_SCAN) {
      due.add(s.get());
      s = task.schedule().next(s.get());
    }
    if (due.isEmpty()) {
      return false;
    }
    boolean truncated = due.size() == MAX_SCAN && s.isPresent() && !s.get().isAfter(now);
    Instant lateLimit = now.minus(task.missedAfter());
    List<Instant> missed = new ArrayList<>();
    List<Instant> onTime = new ArrayList<>();
    for (Instant slot : due) {
      (slot.isBefore(lateLimit) ? missed : onTime).add(slot);
    }
    List<Instant> skip = new ArrayList<>();
    List<Instant> catchUp = new ArrayList<>();
    if (truncated || task.missedSlots() == MissedSlots.SKIP) {
      skip.addAll(missed); // a gap longer than a pass: its oldest slots are beyond any catch-up
    } else if (task.missedSlots() == MissedSlots.RUN_ONCE) {
      if (onTime.isEmpty() && !missed.isEmpty()) {
        catchUp.add(missed.remove(missed.size() - 1));
      }
      skip.addAll(missed);
    } else {
      int keep = Math.min(task.catchUpLimit(), missed.size());
      skip.addAll(missed.subList(0, missed.size() - keep));
      catchUp.addAll(missed.subList(missed.size() - keep, missed.size()));
    }
    if (!skip.isEmpty()) {
      int recorded = db.with(c -> table.skip(c, namespace, task.name(), skip, RunKind.SCHEDULED, node,
          "missed: not started within " + task.missedAfter() + " of its time (" + task.missedSlots() + ")",
          task.missedAfter()));
      log.info("scheduler {}: task {}: {} missed slot(s) from {} to {} skipped ({} recorded here)", node, task.name(),
          skip.size(), skip.get(0), skip.get(skip.size() - 1), recorded);
      ts.lastSlot = skip.get(skip.size() - 1);
    }
    catchUp.forEach(slot -> ts.plan.addLast(new Planned(slot, RunKind.CATCH_UP)));
    onTime.forEach(slot -> ts.plan.addLast(new Planned(slot, RunKind.SCHEDULED)));
    return !ts.plan.isEmpty() || truncated;
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
    boolean missed = next.isBefore(now.minus(ts.task.missedAfter()));
    if (missed && ts.task.missedSlots() == MissedSlots.SKIP) {
      Instant slot = next;
      db.with(c -> table.skip(c, namespace, ts.task.name(), List.of(slot), RunKind.SCHEDULED, node,
          "missed: not started within " + ts.task.missedAfter() + " of its time (SKIP)", ts.task.missedAfter()));
      ts.delayLatest = db.with(c -> table.latest(c, namespace, ts.task.name())).orElse(null);
      return now;
    }
    Outcome o = attempt(ts, next, missed ? RunKind.CATCH_UP : RunKind.SCHEDULED);
    if (o == Outcome.TAKEN) {
      ts.delayLatest = db.with(c -> table.latest(c, namespace, ts.task.name())).orElse(null);
      return now;
    }
    if (o != Outcome.STARTED) {
      retryLater(ts, o);
    }
    return null;
  }

  /** Sets when to look at the task again after an outcome that did not resolve its slot; true if set. */
  private boolean retryLater(TaskState ts, Outcome o) {
    long delay;
    switch (o) {
      case BUSY:
        delay = BUSY_RETRY_NANOS;
        break;
      case EARLY:
        delay = EARLY_RETRY_NANOS;
        try {
          measureOffset(); // woke early: the estimate of the database's clock is off
        } catch (SQLException e) {
          delay = ERROR_RETRY_NANOS;
        }
        break;
      case OVERLAP:
      case QUEUED:
        // queued behind a run: this node's own run wakes the loop when it ends; another's, the poll
        delay = pollInterval.toNanos();
        break;
      case ERROR:
        delay = ERROR_RETRY_NANOS;
        break;
      default:
        return false;
    }
    ts.retryAt = System.nanoTime() + delay;
    return true;
  }

  /** Takes the task's lock, then inserts the slot's row; runs it if both succeed. */
  private Outcome attempt(TaskState ts, Instant slot, RunKind kind) {
    String name = ts.task.name();
    if (isClosing()) {
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
      RunTable.Claim claim;
      try {
        claim = db.with(c -> table.claim(c, namespace, name, slot, kind, 1, node, handle.fencingToken()));
      } catch (SQLException | RuntimeException e) {
        claim = afterLostReply(ts, handle, slot, e);
        if (claim == null) {
          handle.close();
          throw e;
        }
      }
      if (claim != RunTable.Claim.CLAIMED) {
        handle.close();
        return claim == RunTable.Claim.TAKEN ? Outcome.TAKEN : Outcome.EARLY;
      }
      start(ts, handle, slot, kind, 1);
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
   * fencing token), TAKEN if another's, null if it cannot be told (the lock is then released; a
   * row of ours left behind is swept as disconnected).
   */
  private RunTable.Claim afterLostReply(TaskState ts, LockHandle handle, Instant slot, Exception failure) {
    try {
      Optional<Long> token = db.with(c -> table.slotToken(c, namespace, ts.task.name(), slot));
      if (token.isEmpty()) {
        return null;
      }
      return token.get() == handle.fencingToken() ? RunTable.Claim.CLAIMED : RunTable.Claim.TAKEN;
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

  private void start(TaskState ts, LockHandle handle, Instant slot, RunKind kind, int attempt) {
    RunExecution run = new RunExecution(ts.task, handle, slot, kind, attempt, node, new RunExecution.Ending() {
      @Override
      public boolean record(RunExecution r, RunState state, String detail, Throwable error) throws Exception {
        return db.with(c -> table.finish(c, namespace, ts.task.name(), slot, handle.fencingToken(), state, detail,
            error));
      }

      @Override
      public void ended(RunExecution r) {
        if (ts.current == r) {
          ts.current = null;
        }
        ts.retryAt = 0; // a slot queued behind this run may go now
        if (ts.task.schedule().fromPreviousEnd()) {
          ts.delayLatest = new RunTable.Latest(slot, RunState.RUNNING, Optional.empty()); // the poll reads the end
        }
        wake();
      }
    }, watchdog, clock.instant());
    ts.current = run;
    log.debug("scheduler {}: task {} runs slot {} ({}, attempt {}, token {})", node, ts.task.name(), slot, kind,
        attempt, handle.fencingToken());
    try {
      runs.execute(run);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      ts.current = null;
      try { // closing: the row is ours and will not run; say so while the lock is still held
        db.with(c -> table.finish(c, namespace, ts.task.name(), slot, handle.fencingToken(), RunState.INTERRUPTED,
            "the scheduler closed before the run started", null));
      } catch (SQLException | RuntimeException ex) {
        log.debug("scheduler {}: task {}: could not record slot {} as not started: {}", node, ts.task.name(), slot,
            ex.toString());
      } finally {
        handle.close();
      }
    }
  }

  /** Finds running rows whose runner is gone (their task lock is free): marks them, and retries if the task says so. */
  private void sweep() throws SQLException {
    if (tasks.isEmpty()) {
      return;
    }
    List<String> names = new ArrayList<>(tasks.keySet());
    for (RunTable.Running r : db.with(c -> table.running(c, namespace, names))) {
      TaskState ts = tasks.get(r.task());
      RunExecution mine = ts == null ? null : ts.current;
      if (ts == null || mine != null) {
        continue; // this node runs it (or another slot of it): its lock is held here
      }
      Optional<LockHandle> h = ts.lock.tryAcquire();
      if (h.isEmpty()) {
        continue; // its runner holds the lock: alive
      }
      LockHandle handle = h.get();
      boolean handedOn = false;
      try {
        if (r.attempt() < ts.task.maxAttempts() && !ts.paused && !isClosing()) {
          if (db.with(c -> table.retry(c, namespace, r, node, handle.fencingToken()))) {
            log.warn("scheduler {}: task {}: the runner {} of slot {} disconnected; running attempt {} here", node,
                r.task(), r.node(), r.slot(), r.attempt() + 1);
            start(ts, handle, r.slot(), r.kind(), r.attempt() + 1);
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

  private void prune() {
    try {
      int total = 0;
      for (int i = 0; i < 100; i++) {
        int n = db.with(c -> table.prune(c, namespace, retention, PRUNE_BATCH));
        total += n;
        if (n < PRUNE_BATCH || isClosing()) {
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

  private static long jitter(Duration d) {
    long n = d.toNanos();
    return n * 8 / 10 + ThreadLocalRandom.current().nextLong(n * 4 / 10 + 1);
  }

  @Override
  public void close() {
    synchronized (monitor) {
      if (closing) {
        return;
      }
      closing = true;
      monitor.notifyAll();
    }
    try {
      if (thread.isAlive() && Thread.currentThread() != thread) {
        thread.join(10_000);
      }
      runs.shutdown();
      if (!runs.awaitTermination(closeTimeout.toNanos(), TimeUnit.NANOSECONDS)) {
        for (TaskState ts : tasks.values()) {
          RunExecution r = ts.current;
          if (r != null) {
            r.requestStop("the scheduler is closing");
          }
        }
        if (!runs.awaitTermination(15, TimeUnit.SECONDS)) {
          log.warn("scheduler {}: runs still going after being interrupted; their locks are released when they end",
              node);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      watchdog.shutdownNow();
      db.close();
    }
  }

  @Override
  public String toString() {
    return "Scheduler[node=" + node + ", namespace=" + namespace + ", " + tasks.size() + " task(s)"
        + (isClosing() ? ", closed" : "") + "]";
  }
}
