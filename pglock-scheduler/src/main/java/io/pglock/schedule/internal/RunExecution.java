package io.pglock.schedule.internal;

import io.pglock.LockHandle;
import io.pglock.schedule.RunContext;
import io.pglock.schedule.RunKind;
import io.pglock.schedule.RunState;
import io.pglock.schedule.Task;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One run of one slot on this node: runs the body on a run thread while holding the task's lock,
 * interrupts it at its deadline or when the lock is lost, records the outcome (only if the row is
 * still this run's: same fencing token), then releases the lock.
 */
final class RunExecution implements Runnable, RunContext {
  /** The outcome's record is tried this many times, a second apart, before the lock is let go anyway. */
  private static final int FINISH_ATTEMPTS = 3;

  /** What the run tells the scheduler when it ends. */
  interface Ending {
    /** Records the outcome; true if the row was this run's and is now finished. */
    boolean record(RunExecution run, RunState state, String detail, Throwable error) throws Exception;

    /** The run is over and its lock released. */
    void ended(RunExecution run);
  }

  private final Task task;
  private final LockHandle handle;
  private final Instant slot;
  private final RunKind kind;
  private final int attempt;
  private final String node;
  private final Ending ending;
  private final ScheduledExecutorService watchdog;
  private final Instant deadline;
  private Thread thread; // guarded by this: the run thread while the body runs
  private String stopReason; // guarded by this
  /** How the body ended; written on the run thread before {@link Ending#ended}, read there. */
  private RunState outcome;
  /** How long the body ran; written with {@link #outcome}. */
  private long ranNanos;

  RunExecution(Task task, LockHandle handle, Instant slot, RunKind kind, int attempt, String node, Ending ending,
      ScheduledExecutorService watchdog, Instant localNow) {
    this.task = task;
    this.handle = handle;
    this.slot = slot;
    this.kind = kind;
    this.attempt = attempt;
    this.node = node;
    this.ending = ending;
    this.watchdog = watchdog;
    this.deadline = task.deadline().map(localNow::plus).orElse(null);
  }

  @Override
  public void run() {
    synchronized (this) {
      thread = Thread.currentThread();
      if (stopReason != null) {
        thread.interrupt(); // told to stop before it started (closing)
      }
    }
    ScheduledFuture<?> timer = null;
    RunState state;
    String detail = null;
    Throwable error = null;
    long began = System.nanoTime();
    try {
      handle.onLoss(cause -> requestStop("this node lost the task's lock (" + cause + ")"));
      if (task.deadline().isPresent()) {
        java.time.Duration d = task.deadline().get();
        timer = watchdog.schedule(() -> requestStop("its deadline of " + d + " passed"), d.toNanos(),
            TimeUnit.NANOSECONDS);
      }
      task.body().run(this);
      state = RunState.SUCCEEDED;
    } catch (InterruptedException e) {
      state = RunState.INTERRUPTED;
      detail = reason("interrupted");
    } catch (Exception | Error e) {
      String why = reason(null);
      state = why != null ? RunState.INTERRUPTED : RunState.FAILED;
      detail = why;
      error = e;
    } finally {
      synchronized (this) {
        thread = null; // no interrupt reaches this pool thread from now on
      }
      Thread.interrupted();
      if (timer != null) {
        timer.cancel(false);
      }
    }
    ranNanos = System.nanoTime() - began;
    outcome = state;
    try {
      record(state, detail, error);
    } finally {
      handle.close();
      ending.ended(this);
    }
  }

  private void record(RunState state, String detail, Throwable error) {
    for (int i = 1; i <= FINISH_ATTEMPTS; i++) {
      try {
        ending.record(this, state, detail, error);
        return;
      } catch (Exception e) {
        if (i == FINISH_ATTEMPTS || !handle.isHeld()) {
          DefaultScheduler.log.warn("task {}: could not record the end ({}) of slot {}: {}; its row stays running"
              + " until another node finds its lock free and marks it disconnected", task.name(), state, slot,
              e.toString());
          return;
        }
        try {
          TimeUnit.SECONDS.sleep(1); // the database is away for a moment: a pause between attempts
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** How the body ended: set once it did (read it from {@link Ending#ended}). */
  RunState outcome() {
    return outcome;
  }

  /** How long the body ran, in nanoseconds: set once it ended (read it from {@link Ending#ended}). */
  long ranNanos() {
    return ranNanos;
  }

  private synchronized String reason(String otherwise) {
    return stopReason != null ? stopReason : otherwise;
  }

  /** Tells the run to stop: a flag for the body, and an interrupt while the body runs. */
  synchronized void requestStop(String reason) {
    if (stopReason == null) {
      stopReason = reason;
    }
    if (thread != null) {
      thread.interrupt();
    }
  }

  @Override
  public String task() {
    return task.name();
  }

  @Override
  public Instant slot() {
    return slot;
  }

  @Override
  public RunKind kind() {
    return kind;
  }

  @Override
  public int attempt() {
    return attempt;
  }

  @Override
  public long fencingToken() {
    return handle.fencingToken();
  }

  @Override
  public Optional<Instant> deadline() {
    return Optional.ofNullable(deadline);
  }

  @Override
  public String node() {
    return node;
  }

  /**
   * True once told to stop, and also as soon as the task's lock is no longer held, read from the
   * handle itself: {@link LockHandle#isHeld()} turns false at the lease deadline by the monotonic
   * clock, before another node can be granted the lock, whereas the stop request comes from a loss
   * callback that runs later (a watch tick, the callback executor) or not at all while this
   * process is paused.
   */
  @Override
  public boolean stopRequested() {
    synchronized (this) {
      if (stopReason != null) {
        return true;
      }
    }
    return !handle.isHeld();
  }

  @Override
  public String toString() {
    return "Run[" + task.name() + " " + slot + " " + kind + " attempt " + attempt + " on " + node + "]";
  }
}
