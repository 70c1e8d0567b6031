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

  /**
   * Opens within the connect timeout: the connect and the setup statements run on a thread of their
   * own, as a silent network can hold them past any socket setting; an open that ends after the
   * caller gave up discards its connection.
   */
  static LeasedSession open(PgLocksConfig config, String role) {
    String name = ApplicationNames.of(config, role);
    java.util.concurrent.CompletableFuture<SessionSetup.Opened> f = new java.util.concurrent.CompletableFuture<>();
    java.util.concurrent.atomic.AtomicBoolean abandoned = new java.util.concurrent.atomic.AtomicBoolean();
    Thread opener = new Thread(() -> {
      try {
        SessionSetup.Opened o = SessionSetup.open(config, name);
        if (!f.complete(o) || abandoned.get()) {
          o.connection().discard();
        }
      } catch (RuntimeException e) {
        f.completeExceptionally(e);
      }
    }, "pglock-" + config.nodeName() + "-" + role + "-open");
    opener.setDaemon(true);
    opener.start();
    try {
      return new DefaultLeasedSession(f.get(config.connectTimeout().toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS));
    } catch (java.util.concurrent.TimeoutException e) {
      abandoned.set(true);
      if (f.isDone() && !f.isCompletedExceptionally()) {
        f.join().connection().discard(); // it came in just now: too late all the same
      }
      throw new LockSessionException("could not open a leased session within the connect timeout ("
          + config.connectTimeout().toMillis() + " ms): the database or the network does not answer, or a pooling "
          + "DataSource has no connection to spare; raise PgLocksBuilder.connectTimeout if the database is slow", null);
    } catch (InterruptedException e) {
      abandoned.set(true);
      Thread.currentThread().interrupt();
      throw new LockSessionException("interrupted while opening a leased session", e);
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      throw new LockSessionException("could not open a leased session: " + cause, cause);
    }
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
