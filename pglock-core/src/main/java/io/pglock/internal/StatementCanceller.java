package io.pglock.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.postgresql.PGConnection;

/**
 * Turns an interrupt of a thread blocked in one statement into cancel requests, since socket reads
 * do not see interrupts. Create it right before the blocking statement and close it as soon as the
 * statement returns: it is armed only for that statement.
 *
 * <p><b>It keeps cancelling.</b> PostgreSQL ignores a cancel that reaches a backend between
 * statements (the statement may still be on its way, or buffered in the network). So while the
 * waiter is interrupted and the canceller is open, the watchdog sends a cancel at every
 * {@link #CHECK_MILLIS} check, one at a time, until the statement ends and {@link #close()} is
 * called. At most one cancel is in flight per canceller.
 *
 * <p><b>It never stalls the caller or the watchdog.</b> Each cancel (a new connection) is sent from
 * its own short-lived daemon thread, bounded by pgjdbc's {@code cancelSignalTimeout}, so that a slow
 * or partitioned network never holds up the watchdog's lease checks.
 *
 * <p><b>It never hits the next statement.</b> {@link #close()} stops new cancels and, if one is in
 * flight, waits (at most {@value #SEND_WAIT_MILLIS} ms, past pgjdbc's default 10 s bound of a cancel
 * over a dead network) until the server has received it; a cancel that reaches a backend which has
 * finished the statement is ignored by PostgreSQL. Only a cancel still undelivered after that bound
 * (a network stalled for longer) could reach the caller's next statement, which then fails with
 * SQLSTATE 57014 rather than silently.
 */
final class StatementCanceller implements AutoCloseable {
  static final long CHECK_MILLIS = 50;
  static final long SEND_WAIT_MILLIS = 15_000;

  private enum State { WATCHING, SENDING, CLOSED }

  private final Object monitor = new Object();
  private final Connection connection;
  private final BooleanSupplier waiterInterrupted;
  private final String threadName;
  private final ScheduledFuture<?> watch;
  private State state = State.WATCHING; // guarded by monitor
  private int attempts; // guarded by monitor

  StatementCanceller(Connection connection, BooleanSupplier waiterInterrupted, ScheduledExecutorService watchdog,
      String threadName) {
    this.connection = connection;
    this.waiterInterrupted = waiterInterrupted;
    this.threadName = threadName;
    this.watch = watchdog.scheduleWithFixedDelay(this::check, CHECK_MILLIS, CHECK_MILLIS, TimeUnit.MILLISECONDS);
  }

  /** On the watchdog: starts one cancel if the waiter is interrupted and none is in flight. */
  private void check() {
    if (!waiterInterrupted.getAsBoolean()) {
      return;
    }
    synchronized (monitor) {
      if (state != State.WATCHING) {
        return;
      }
      state = State.SENDING;
      attempts++;
    }
    try {
      Thread sender = new Thread(this::send, threadName);
      sender.setDaemon(true);
      sender.start();
    } catch (RuntimeException | Error e) {
      sent(); // could not start a thread now: the next check tries again
    }
  }

  private void send() {
    try {
      connection.unwrap(PGConnection.class).cancelQuery();
    } catch (SQLException e) {
      // not delivered (or the connection is gone): the next check sends again while still open
    } finally {
      sent();
    }
  }

  private void sent() {
    synchronized (monitor) {
      if (state == State.SENDING) {
        state = State.WATCHING;
      }
      monitor.notifyAll();
    }
  }

  /** True if a cancel was sent (or attempted) because the waiter was interrupted. */
  boolean cancelled() {
    synchronized (monitor) {
      return attempts > 0;
    }
  }

  /** How many cancels were started (for tests and logs). */
  int attempts() {
    synchronized (monitor) {
      return attempts;
    }
  }

  /**
   * Stops cancelling; if a cancel is in flight, waits (bounded) until it has reached the server. An
   * interrupt of the calling thread does not cut this wait short; it stays set.
   */
  @Override
  public void close() {
    watch.cancel(false);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SEND_WAIT_MILLIS);
    boolean interrupted = false;
    synchronized (monitor) {
      while (state == State.SENDING) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (left <= 0) {
          break;
        }
        try {
          monitor.wait(left);
        } catch (InterruptedException e) {
          interrupted = true; // the waiter usually is interrupted: that is why it cancels
        }
      }
      state = State.CLOSED; // a running check sees this and sends nothing more
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
