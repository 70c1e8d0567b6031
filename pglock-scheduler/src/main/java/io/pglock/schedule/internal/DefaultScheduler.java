package io.pglock.schedule.internal;

import io.pglock.LockSessionException;
import io.pglock.PgLocks;
import io.pglock.PgLocksConfig;
import io.pglock.SchemaMissingException;
import io.pglock.schedule.Scheduler;
import io.pglock.schedule.SchedulerListener;
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
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler of one node: its API, and a loop thread that wakes at each slot (by the database's
 * clock as measured from here), has each task's due slots decided ({@link SlotPlanner}) and carried
 * out ({@link SlotExecutor}), polls the tasks' flags (pauses, manual triggers), sweeps for
 * disconnected runs and prunes the history ({@link Housekeeping}). Every task's state belongs to
 * the loop thread; run threads only report their end (a queue of {@link RunEnded}). See
 * {@link Scheduler} and {@code docs/scheduling.md}.
 */
public final class DefaultScheduler implements Scheduler {
  static final Logger log = LoggerFactory.getLogger(DefaultScheduler.class);
  private static final long OFFSET_EVERY_NANOS = 30_000_000_000L;
  private static final long PRUNE_EVERY_NANOS = 600_000_000_000L;

  private final PgLocks locks;
  private final PgLocksConfig config;
  private final String namespace;
  private final String node;
  private final Duration pollInterval;
  private final Duration sweepInterval;
  private final Duration closeTimeout;
  private final DbClock dbClock;
  private final RunTable table;
  private final SchedulerConnection db;
  private final TaskAdmin admin;
  /** Written by register (any thread), read by the loop; each state itself is the loop's only. */
  private final Map<String, TaskState> tasks = new ConcurrentHashMap<>();
  /** The runs going on this node: close() tells them to stop. */
  private final Set<RunExecution> active = ConcurrentHashMap.newKeySet();
  private final Queue<RunEnded> ended = new ConcurrentLinkedQueue<>();
  private final SlotExecutor executor;
  private final Housekeeping housekeeping;
  private final Thread thread;
  private final ExecutorService runs;
  private final ScheduledExecutorService watchdog;
  private final Object monitor = new Object();
  private boolean started; // guarded by monitor
  private boolean closing; // guarded by monitor
  private boolean woken; // guarded by monitor

  public DefaultScheduler(PgLocks locks, Duration pollInterval, Duration sweepInterval, Duration retention,
      Duration closeTimeout, Duration networkTimeout, Clock clock, SchedulerListener listener) {
    this.locks = locks;
    this.config = locks.config();
    this.namespace = config.namespace();
    this.node = config.nodeName();
    this.pollInterval = pollInterval;
    this.sweepInterval = sweepInterval;
    this.closeTimeout = closeTimeout;
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
    this.executor = new SlotExecutor(db, table, dbClock, namespace, node, pollInterval, runs, watchdog, clock, ended,
        active, GuardedSchedulerListener.of(listener), new SlotExecutor.Loop() {
          @Override
          public void measureOffset() throws SQLException {
            DefaultScheduler.this.measureOffset();
          }

          @Override
          public boolean closing() {
            return isClosing();
          }

          @Override
          public void wake() {
            DefaultScheduler.this.wake();
          }
        });
    this.housekeeping = new Housekeeping(db, table, namespace, node, retention, executor, this::isClosing);
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
    TaskState ts;
    try {
      // the task tables first: their absence is what a database without the schema lacks first,
      // and the message names their version
      db.with(c -> {
        table.register(c, namespace, name, task.schedule().describe(), node);
        return null;
      });
      ts = new TaskState(task, locks.lock(lockName(name)).withFencing());
      measureOffset();
      Optional<RunTable.Latest> latest = db.with(c -> table.latest(c, namespace, name));
      // A new task starts now: nothing before its registration is missed.
      Instant from = latest.map(RunTable.Latest::slot).orElse(dbClock.now());
      ts.resolvedUpTo = from;
      ts.decidedUpTo = from;
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
      return new SchemaMissingException("scheduled tasks need pglock's schema \"" + config.schema() + "\" at version 8"
          + " or later (its task tables), which this database lacks (checked by Scheduler.register and"
          + " Scheduler.start): run PgLockSchema.migrate(dataSource, \"" + config.schema() + "\") once, or apply the"
          + " files under io/pglock/schema/ up to V8__scheduled_tasks.sql with Flyway or Liquibase, then build the"
          + " PgLocks again");
    }
    return new LockSessionException("could not " + what + ": " + e.getMessage() + " (SQLSTATE " + e.getSQLState()
        + ")", e);
  }

  /**
   * {@inheritDoc}
   *
   * @throws SchemaMissingException if the schema lacks the task tables (version 8)
   * @throws LockSessionException if the database cannot be reached
   */
  @Override
  public void start() {
    synchronized (monitor) {
      if (started || closing) {
        return;
      }
    }
    try {
      db.with(c -> {
        table.check(c);
        return null;
      });
    } catch (SQLException e) {
      throw failure("start the scheduler", e);
    }
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
        // the wake-up first, then the events: a run's end queued after this take keeps its wake-up
        // for the next iteration (taken after the events, it would be spent here without its event,
        // and the next slot of a fixed delay or a queued slot would wait up to pollInterval)
        boolean wokenNow = takeWoken();
        executor.applyEnded();
        now = System.nanoTime();
        if (now - nextOffset >= 0 || !dbClock.measured()) {
          measureOffset();
          nextOffset = now + OFFSET_EVERY_NANOS;
        }
        boolean poll = now - nextPoll >= 0 || wokenNow;
        if (poll) {
          poll();
          nextPoll = System.nanoTime() + pollInterval.toNanos();
        }
        if (now - nextSweep >= 0) {
          housekeeping.sweep(tasks);
          nextSweep = System.nanoTime() + jitter(sweepInterval);
        }
        if (now - nextPrune >= 0) {
          housekeeping.prune();
          nextPrune = System.nanoTime() + jitter(Duration.ofNanos(PRUNE_EVERY_NANOS));
        }
        long wakeAt = Math.min(nextPoll, nextSweep);
        for (TaskState ts : tasks.values()) {
          if (isClosing()) {
            break;
          }
          Instant due;
          try {
            due = executor.process(ts);
          } catch (SQLException | RuntimeException e) {
            // one task's trouble (its schedule threw, a statement failed) does not hold up the others
            log.warn("scheduler {}: task {}: {}; trying again in a second", node, ts.task.name(), e.toString());
            ts.retryAt = System.nanoTime() + SlotExecutor.ERROR_RETRY_NANOS;
            due = null;
          }
          if (due != null) {
            wakeAt = Math.min(wakeAt, System.nanoTime() + dbClock.until(due).toNanos());
          }
          for (long at : new long[] {ts.retryAt, ts.pendingManual != null ? ts.manualRetryAt : 0}) {
            if (at != 0) {
              wakeAt = Math.min(wakeAt, at);
            }
          }
        }
        awaitWake(wakeAt);
      } catch (SQLException | RuntimeException e) {
        log.warn("scheduler {}: {}; trying again in a second", node, e.toString());
        awaitWake(System.nanoTime() + SlotExecutor.ERROR_RETRY_NANOS);
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
        for (RunExecution r : active) {
          r.requestStop("the scheduler is closing");
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
