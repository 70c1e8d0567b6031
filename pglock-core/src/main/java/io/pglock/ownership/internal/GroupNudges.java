package io.pglock.ownership.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the other members of a group that something changed (a member joined, left or handed
 * resources on), through PostgreSQL's LISTEN/NOTIFY, so that they balance at once instead of at
 * their next round. Only a speed-up: a missed nudge (a notification lost with its connection, a
 * data source that is not pgjdbc's) costs at most an interval, as the rounds go on regardless.
 *
 * <p>The listener holds one connection of the data source for as long as the member is in the
 * group; it waits in {@link PGConnection#getNotifications(int)} a quarter of a second at a time
 * (no network traffic), so that it stops within that when closed, and gives the connection back only after {@code UNLISTEN *}
 * (a pooled connection must not keep listening for its next borrower).
 */
final class GroupNudges implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(GroupNudges.class);
  private static final int WAIT_MILLIS = 250;
  private static final int NETWORK_TIMEOUT_MILLIS = 5_000;
  private static final long RETRY_MILLIS = 2_000;

  private final DataSource dataSource;
  private final String channel;
  private final String memberId;
  private final Runnable onNudge;
  private final Thread thread;
  private volatile boolean stopped;

  GroupNudges(DataSource dataSource, String namespace, String group, String memberId, String threadName,
      Runnable onNudge) {
    this.dataSource = dataSource;
    this.channel = channel(namespace, group);
    this.memberId = memberId;
    this.onNudge = onNudge;
    this.thread = new Thread(this::listen, threadName);
    this.thread.setDaemon(true);
  }

  /**
   * The channel of a group: a fixed prefix and a hash of namespace and group, so that it is a
   * plain identifier (63 bytes at most, nothing to quote) whatever the names.
   */
  static String channel(String namespace, String group) {
    try {
      byte[] hash = MessageDigest.getInstance("SHA-256")
          .digest((namespace + '\0' + group).getBytes(StandardCharsets.UTF_8));
      return "pglock_own_" + HexFormat.of().formatHex(hash, 0, 12);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  void start() {
    thread.start();
  }

  /** Nudges every member of the group (this one ignores its own). Best effort: failures are logged at debug. */
  void send() {
    try (Connection c = dataSource.getConnection()) {
      int timeout = c.getNetworkTimeout();
      c.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
        ps.setString(1, channel);
        ps.setString(2, memberId);
        ps.execute();
        if (!c.getAutoCommit()) {
          c.commit(); // a notification is sent when its transaction commits
        }
      } finally {
        c.setNetworkTimeout(Runnable::run, timeout); // a pooled connection goes back as it came
      }
    } catch (SQLException | RuntimeException e) {
      log.debug("could not nudge the group's members on {}: {}", channel, e.toString());
    }
  }

  private void listen() {
    while (!stopped) {
      try {
        listenOnce();
      } catch (SQLException | RuntimeException e) {
        log.debug("listening on {} failed ({}); the rounds go on, listening again in {} ms", channel, e, RETRY_MILLIS);
      }
      pause();
    }
  }

  private void listenOnce() throws SQLException {
    Connection c = dataSource.getConnection();
    boolean clean = false;
    try {
      PGConnection pg;
      if (!c.isWrapperFor(PGConnection.class)) {
        log.debug("the data source's connections are not pgjdbc's: no nudges on {}, balancing at each round only",
            channel);
        stopped = true;
        clean = true;
        return;
      }
      pg = c.unwrap(PGConnection.class);
      int timeout = c.getNetworkTimeout();
      boolean autoCommit = c.getAutoCommit();
      c.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
      if (!autoCommit) {
        c.setAutoCommit(true);
      }
      try (Statement s = c.createStatement()) {
        s.execute("LISTEN " + channel);
      }
      onNudge.run(); // a change may have gone by while nobody listened
      while (!stopped) {
        PGNotification[] got = pg.getNotifications(WAIT_MILLIS);
        if (got == null) {
          continue;
        }
        for (PGNotification n : got) {
          if (!memberId.equals(n.getParameter())) {
            onNudge.run();
            break;
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

  /** Tells the listener to stop, without waiting: it stops within a quarter of a second. */
  void stop() {
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
