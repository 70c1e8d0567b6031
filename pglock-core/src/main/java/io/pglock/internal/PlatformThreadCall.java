package io.pglock.internal;

import java.sql.SQLException;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * Runs a caller's statements on a platform thread when the caller is a virtual thread. On Java 21+
 * an interrupt of a virtual thread blocked in socket I/O closes the socket, which would destroy the
 * caller's connection and transaction instead of ending a wait with {@link InterruptedException}.
 * A platform thread's socket read ignores interrupts, so a cancel request can end the statement
 * cleanly. The caller waits for the result without ever giving up early (its interrupt is recorded,
 * passed to the task as "interrupted", and restored afterwards), so the connection is never used by
 * two threads at once.
 */
final class PlatformThreadCall {
  private PlatformThreadCall() {}

  /** A task that sees the caller's interrupt through a supplier, not its own thread's flag. */
  interface Task<T> {
    T run(BooleanSupplier callerInterrupted) throws SQLException;
  }

  /** Whether the thread is a virtual thread (Java 21+), without needing Java 21 to compile. */
  static boolean isVirtual(Thread thread) {
    return thread.getClass().getName().equals("java.lang.VirtualThread");
  }

  /**
   * Runs the task on the calling thread if it is a platform thread, else on a new platform thread
   * while the caller waits. Either way the caller's interrupt flag is as it was, or set if it was
   * interrupted meanwhile, when this returns or throws.
   */
  static <T> T run(String threadName, Task<T> task) throws SQLException {
    Thread caller = Thread.currentThread();
    if (!isVirtual(caller)) {
      return task.run(caller::isInterrupted);
    }
    AtomicBoolean interrupted = new AtomicBoolean();
    Callable<T> call = () -> task.run(() -> interrupted.get() || caller.isInterrupted());
    FutureTask<T> future = new FutureTask<>(call);
    Thread worker = new Thread(future, threadName);
    worker.setDaemon(true);
    worker.start();
    try {
      while (true) {
        try {
          return future.get();
        } catch (InterruptedException e) {
          interrupted.set(true); // the task cancels its statement; wait for it to finish
        }
      }
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof SQLException sql) {
        throw sql;
      }
      if (cause instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(cause);
    } finally {
      if (interrupted.get()) {
        caller.interrupt();
      }
    }
  }
}
