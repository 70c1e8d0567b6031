package io.pglock.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.postgresql.PGConnection;

/**
 * Turns an interrupt of a thread blocked in a statement into a cancel request, since socket reads
 * do not see interrupts. The watchdog looks every {@link #CHECK_MILLIS}; the cancel itself (a new
 * connection) is sent from its own short-lived thread, so that a slow or partitioned network never
 * holds up the watchdog's lease checks.
 *
 * <p>{@link #close()} guarantees that no cancel arrives after it returns: either none was started,
 * or it waits (up to {@value #SEND_WAIT_MILLIS} ms, the bound of a cancel over a dead network) until
 * the server has received it. A cancel that fails to reach the server is sent again at the next check. A cancel that reaches a backend which has finished
 * the statement is ignored by PostgreSQL, so it cannot hit the caller's next statement.
 */
final class StatementCanceller implements AutoCloseable {
  static final long CHECK_MILLIS = 50;
  private static final long SEND_WAIT_MILLIS = 15_000;
  private static final int WATCHING = 0;
  private static final int SENDING = 1;
  private static final int SENT = 2;
  private static final int CLOSED = 3;

  private final AtomicInteger state = new AtomicInteger(WATCHING);
  private final ScheduledFuture<?> watch;

  StatementCanceller(Connection connection, Thread waiter, ScheduledExecutorService watchdog, String threadName) {
    this.watch = watchdog.scheduleWithFixedDelay(() -> {
      if (waiter.isInterrupted() && state.compareAndSet(WATCHING, SENDING)) {
        Thread sender = new Thread(() -> {
          boolean sent = false;
          try {
            connection.unwrap(PGConnection.class).cancelQuery();
            sent = true;
          } catch (SQLException e) {
            // not delivered: the next check sends it again
          } finally {
            synchronized (state) {
              state.set(sent ? SENT : WATCHING);
              state.notifyAll();
            }
          }
        }, threadName);
        sender.setDaemon(true);
        sender.start();
      }
    }, CHECK_MILLIS, CHECK_MILLIS, TimeUnit.MILLISECONDS);
  }

  /** True if a cancel was sent (or is being sent) because the waiter was interrupted. */
  boolean cancelled() {
    int s = state.get();
    return s == SENDING || s == SENT;
  }

  /** Stops watching; if a cancel is under way, waits until it has reached the server. */
  @Override
  public void close() {
    watch.cancel(false);
    if (state.compareAndSet(WATCHING, CLOSED)) {
      return;
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SEND_WAIT_MILLIS);
    boolean interrupted = false;
    synchronized (state) {
      while (state.get() == SENDING) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (left <= 0) {
          break;
        }
        try {
          state.wait(left);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
