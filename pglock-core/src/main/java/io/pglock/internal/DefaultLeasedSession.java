package io.pglock.internal;

import io.pglock.LeasedSession;
import io.pglock.LockSessionException;
import io.pglock.LossCause;
import io.pglock.PgLocksConfig;
import java.sql.SQLException;
import java.time.Duration;

/**
 * {@link LeasedSession} over a connection set up by {@link SessionSetup}: the same server-side
 * timers as the lock sessions, and the same client-side {@link Lease} arithmetic.
 */
final class DefaultLeasedSession implements LeasedSession {
  private final BorrowedConnection connection;
  private final Lease lease;
  private final int pid;
  private volatile LossCause lost;
  private boolean closed;

  private DefaultLeasedSession(SessionSetup.Opened opened) {
    this.connection = opened.connection();
    this.lease = opened.lease();
    this.pid = opened.pid();
  }

  static LeasedSession open(PgLocksConfig config, String role) {
    return new DefaultLeasedSession(SessionSetup.open(config, ApplicationNames.of(config, role)));
  }

  @Override
  public synchronized <T> T call(Work<T> work) throws SQLException {
    if (!closed && lost == null && lease.expired()) {
      // Final: the server may have freed the locks, and the holder may have acted on their loss, so a
      // late answer must not bring the session back.
      lost = LossCause.LEASE_EXPIRED;
      connection.discard();
    }
    if (closed || lost != null) {
      throw new LockSessionException("the leased session (pid " + pid + ") has ended"
          + (lost == null ? " (closed)" : " (" + lost + ")") + "; open a new one", null);
    }
    long sent = lease.now();
    long sentWall = lease.nowWall();
    try {
      T result = work.run(connection.connection);
      lease.succeeded(sent, sentWall);
      return result;
    } catch (SQLException e) {
      if (SqlErrors.isConnectionLoss(e)) {
        lost = LossCause.CONNECTION_LOST;
        connection.discard();
      }
      throw e;
    }
  }

  @Override
  public boolean leaseValid() {
    return lost == null && !closed && !lease.expired();
  }

  @Override
  public Duration untilHeartbeat() {
    return Duration.ofNanos(Math.max(0, lease.untilHeartbeat()));
  }

  @Override
  public int backendPid() {
    return pid;
  }

  @Override
  public LossCause lossCause() {
    LossCause cause = lost;
    return cause == null && lease.expired() ? LossCause.LEASE_EXPIRED : cause;
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (lost != null) {
      return; // already discarded
    }
    try {
      connection.giveBack(); // pg_advisory_unlock_all() first, then the settings as they were
    } catch (SQLException | RuntimeException e) {
      connection.discard(); // the server frees the locks of a dropped connection
    }
  }

  @Override
  public String toString() {
    return "LeasedSession[pid " + pid + ", lease " + lease + (lost == null ? "" : ", " + lost) + "]";
  }
}
