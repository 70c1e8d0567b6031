package io.pglock.ownership.internal;

import io.pglock.internal.util.ChannelListener;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import javax.sql.DataSource;

/**
 * Tells the other members of a group that something changed (a member joined, left or handed
 * resources on), through PostgreSQL's LISTEN/NOTIFY ({@link ChannelListener}), so that they
 * balance at once instead of at their next round. Only a speed-up: a missed nudge costs at most an
 * interval, as the rounds go on regardless.
 */
final class GroupNudges implements AutoCloseable {
  private final DataSource dataSource;
  private final String memberId;
  private final ChannelListener listener;

  GroupNudges(DataSource dataSource, String namespace, String group, String memberId, String threadName,
      Runnable onNudge) {
    this.dataSource = dataSource;
    this.memberId = memberId;
    // a member ignores its own nudges; after a reconnection it balances, as nudges may have gone by
    this.listener = new ChannelListener(dataSource, channel(namespace, group), threadName,
        payload -> {
          if (!memberId.equals(payload)) {
            onNudge.run();
          }
        }, onNudge);
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
    listener.start();
  }

  /** Nudges every member of the group (this one ignores its own). Best effort: failures are logged at debug. */
  void send() {
    ChannelListener.send(dataSource, listener.channel(), memberId);
  }

  /** Tells the listener to stop, without waiting: it stops within a quarter of a second. */
  void stop() {
    listener.stop();
  }

  /** Stops listening: within a quarter of a second and one {@code UNLISTEN} round trip; waits for that, bounded. */
  @Override
  public void close() {
    listener.close();
  }
}
