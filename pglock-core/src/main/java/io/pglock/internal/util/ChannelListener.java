package io.pglock.internal.util;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Listens on one LISTEN/NOTIFY channel on a thread of its own and hands each payload to a callback;
 * sends notifications on the same channel. Used by pglock's modules (ownership nudges, job queue
 * wake-ups) as a speed-up only: a missed notification (a connection lost, a data source that is not
 * pgjdbc's, a transaction pooler) costs the caller one polling interval, never correctness.
 *
 * <p>It holds one connection of the data source while it runs and waits in
 * {@link PGConnection#getNotifications(int)} a quarter of a second at a time (no network traffic),
 * so that it stops within that when closed; it gives the connection back only after
 * {@code UNLISTEN *} (a pooled connection must not keep listening for its next borrower). After
 * every (re)connection it calls {@code onListening}: notifications may have gone by while nobody
 * listened. Public for pglock's other modules; not an API.
 */
public final class ChannelListener implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ChannelListener.class);
  private static final Pattern CHANNEL = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
  private static final int WAIT_MILLIS = 250;
  private static final int NETWORK_TIMEOUT_MILLIS = 5_000;
  private static final long RETRY_MILLIS = 2_000;
  private static final long CHECK_NANOS = TimeUnit.SECONDS.toNanos(30);

  private final DataSource dataSource;
  private final String channel;
  private final Consumer<String> onPayload;
  private final Runnable onListening;
  private final Thread thread;
  private final java.util.concurrent.CountDownLatch listening = new java.util.concurrent.CountDownLatch(1);
  private volatile boolean stopped;

  /**
   * @param channel a plain lower-case identifier (nothing to quote)
   * @param onPayload called on the listener's thread for each notification's payload
   * @param onListening called on the listener's thread each time listening (re)starts
   */
  public ChannelListener(DataSource dataSource, String channel, String threadName, Consumer<String> onPayload,
      Runnable onListening) {
    if (!CHANNEL.matcher(channel).matches()) {
      throw new IllegalArgumentException("not a plain channel name: " + channel);
    }
    this.dataSource = dataSource;
    this.channel = channel;
    this.onPayload = onPayload;
    this.onListening = onListening;
    this.thread = new Thread(this::listen, threadName);
    this.thread.setDaemon(true);
  }

  /** {@return the channel} */
  public String channel() {
    return channel;
  }

  /** Starts listening on its thread. */
  public void start() {
    thread.start();
  }

  /**
   * Sends a notification on a channel, on a connection of the data source, committed. Best effort:
   * failures are logged at debug.
   */
  public static void send(DataSource dataSource, String channel, String payload) {
    try (Connection c = dataSource.getConnection()) {
      int timeout = c.getNetworkTimeout();
      c.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
        ps.setString(1, channel);
        ps.setString(2, payload);
        ps.execute();
        if (!c.getAutoCommit()) {
          c.commit(); // a notification is sent when its transaction commits
        }
      } finally {
        c.setNetworkTimeout(Runnable::run, timeout); // a pooled connection goes back as it came
      }
    } catch (SQLException | RuntimeException e) {
      log.debug("could not notify on {}: {}", channel, e.toString());
    }
  }

  private void listen() {
    while (!stopped) {
      try {
        listenOnce();
      } catch (SQLException | RuntimeException e) {
        log.debug("listening on {} failed ({}); polling goes on, listening again in {} ms", channel, e, RETRY_MILLIS);
      }
      pause();
    }
  }

  private void listenOnce() throws SQLException {
    Connection c = dataSource.getConnection();
    boolean clean = false;
    try {
      if (!c.isWrapperFor(PGConnection.class)) {
        log.debug("the data source's connections are not pgjdbc's: no notifications on {}, polling only", channel);
        stopped = true;
        clean = true;
        return;
      }
      PGConnection pg = c.unwrap(PGConnection.class);
      int timeout = c.getNetworkTimeout();
      boolean autoCommit = c.getAutoCommit();
      c.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
      if (!autoCommit) {
        c.setAutoCommit(true);
      }
      try (Statement s = c.createStatement()) {
        s.execute("LISTEN " + channel);
      }
      listening.countDown();
      onListening.run();
      long nextCheck = System.nanoTime() + CHECK_NANOS;
      while (!stopped) {
        PGNotification[] got = pg.getNotifications(WAIT_MILLIS);
        if (System.nanoTime() - nextCheck > 0) {
          // A half-open connection (the server or the path gone silently) delivers nothing and
          // reports nothing: a statement now and then finds it out (network timeout 5 s), and the
          // listener connects again.
          try (Statement s = c.createStatement()) {
            s.execute("SELECT 1");
          }
          nextCheck = System.nanoTime() + CHECK_NANOS;
        }
        if (got == null) {
          continue;
        }
        for (PGNotification n : got) {
          try {
            onPayload.accept(n.getParameter());
          } catch (RuntimeException e) {
            log.warn("a notification handler on {} failed", channel, e);
          }
        }
      }
      try (Statement s = c.createStatement()) {
        s.execute("UNLISTEN *");
      }
      c.setAutoCommit(autoCommit); // a pooled connection goes back as it came
      c.setNetworkTimeout(Runnable::run, timeout);
      clean = true;
    } finally {
      if (!clean) {
        c.abort(Runnable::run); // still listening, or in an unknown state: never back to a pool like that
      }
      c.close();
    }
  }

  private void pause() {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS);
    synchronized (this) {
      while (!stopped && deadline - System.nanoTime() > 0) {
        try {
          wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  /**
   * Waits until the listener has issued its first LISTEN (notifications sent after that reach it).
   *
   * @return false if it did not within the timeout (it goes on trying; callers poll meanwhile)
   */
  public boolean awaitListening(java.time.Duration timeout) {
    try {
      return listening.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Tells the listener to stop, without waiting: it stops within a quarter of a second. */
  public void stop() {
    stopped = true;
    synchronized (this) {
      notifyAll();
    }
  }

  /** Stops listening: within a quarter of a second and one {@code UNLISTEN} round trip; waits for that, bounded. */
  @Override
  public void close() {
    stop();
    if (Thread.currentThread() != thread && thread.isAlive()) {
      try {
        thread.join(WAIT_MILLIS + NETWORK_TIMEOUT_MILLIS + 1_000L);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
