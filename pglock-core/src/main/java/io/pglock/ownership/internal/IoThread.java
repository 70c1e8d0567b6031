package io.pglock.ownership.internal;

import io.pglock.LockHandle;
import io.pglock.PgLocksClosedException;
import io.pglock.election.Membership;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The network half of an ownership: one thread that runs what needs the network (the lock table
 * query, the grants, joining), so that the ownership's own thread, which tells the owner of its
 * losses, never waits on a slow or silent network. {@link #call} hands work over and waits for it
 * while the caller keeps watching its handles.
 */
final class IoThread {
  private static final Logger log = LoggerFactory.getLogger(IoThread.class);

  /** What the waiting ownership thread does meanwhile. */
  interface Watcher {
    /** {@return whether the ownership is closing: the wait is given up} */
    boolean closing();

    /** {@return how long the watcher may sleep before it looks at its handles again, in nanoseconds} */
    long watchAgainNanos();

    /** Looks at the handles (no I/O): tells the owner of what was lost. */
    void watch();
  }

  private final ExecutorService executor;
  private final Object monitor;
  private final Duration bound;
  private final String label;
  private boolean failing; // the caller's thread's: the last call failed (log the next failure at debug only)

  /**
   * @param threadName the I/O thread's name
   * @param monitor the ownership's monitor: notified when work completes, waited on meanwhile
   * @param bound how long a call waits for its work
   * @param label "ownership g of member m", for the log
   */
  IoThread(String threadName, Object monitor, Duration bound, String label) {
    this.executor = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, threadName);
      t.setDaemon(true);
      return t;
    });
    this.monitor = monitor;
    this.bound = bound;
    this.label = label;
  }

  /** Runs the task on the I/O thread without waiting; not at all once shut down. */
  void execute(Runnable task) {
    try {
      executor.execute(task);
    } catch (RejectedExecutionException e) {
      // shut down: the ownership's way out does what is left
    }
  }

  /**
   * Runs network work on the I/O thread and waits for it, watching the handles meanwhile (woken by
   * their loss signals). Null if closed meanwhile, if the work failed (logged) or took longer than
   * its bound; whatever such work returns later is released.
   */
  <T> T call(Supplier<T> work, Watcher watcher) {
    CompletableFuture<T> f = CompletableFuture.supplyAsync(work, executor);
    f.whenComplete((r, e) -> {
      synchronized (monitor) {
        monitor.notifyAll();
      }
    });
    long deadline = System.nanoTime() + bound.toNanos();
    boolean taken = false;
    try {
      while (true) {
        synchronized (monitor) {
          if (!f.isDone() && !watcher.closing()) {
            try {
              TimeUnit.NANOSECONDS.timedWait(monitor, watcher.watchAgainNanos());
            } catch (InterruptedException e) {
              // not interruptible: a stray interrupt from user code
            }
          }
        }
        if (f.isDone()) {
          break;
        }
        watcher.watch();
        if (watcher.closing()) {
          return null;
        }
        if (System.nanoTime() - deadline > 0) {
          log.warn("{}: the network work of a round takes longer than {}; going on without it", label, bound);
          return null;
        }
      }
      T result;
      try {
        result = f.join();
      } catch (CompletionException e) {
        Throwable cause = e.getCause() != null ? e.getCause() : e;
        if (cause instanceof PgLocksClosedException) {
          throw (PgLocksClosedException) cause;
        }
        if (failing) {
          log.debug("{}: a round failed again: {}", label, cause.toString());
        } else {
          log.warn("{}: a round failed ({}); trying again at the next", label, cause.toString());
        }
        failing = true;
        return null;
      }
      failing = false;
      taken = true;
      return result;
    } finally {
      if (!taken) {
        f.thenAccept(IoThread::releaseLate);
      }
    }
  }

  /** Releases what a piece of I/O work that was given up on returned late. */
  private static void releaseLate(Object result) {
    if (result instanceof Membership) {
      ((Membership) result).close();
    } else if (result instanceof List) {
      for (Object o : (List<?>) result) {
        ((LockHandle) ((Map.Entry<?, ?>) o).getValue()).close();
      }
    }
  }

  /** Stops at once: for a start that failed. */
  void shutdownNow() {
    executor.shutdownNow();
  }

  /** Lets the work queued so far run, for up to the given time, then stops. */
  void shutdown(long millis) {
    executor.shutdown();
    try {
      if (!executor.awaitTermination(millis, TimeUnit.MILLISECONDS)) {
        executor.shutdownNow(); // what it returns late is released (releaseLate)
      }
    } catch (InterruptedException e) {
      executor.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
