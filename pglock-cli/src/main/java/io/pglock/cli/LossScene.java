package io.pglock.cli;

import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.LossCause;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;

/**
 * The demo's connection-loss scene: one worker holds a lock, the demo ends that worker's lock
 * session on the server with {@code pg_terminate_backend} (as an administrator, a server restart
 * or a crash would), and shows that the handle's {@link LockHandle#onLoss} callback fires with
 * {@link LossCause#CONNECTION_LOST} and that another worker can take the lock right after.
 *
 * <p>It terminates only a backend it has identified as the holder's own: the one pg_locks shows
 * holding this run's key (the namespace is random per run), whose {@code application_name} is that
 * worker's ({@code pglock:<node>:...:<namespace>}). Every wait has a deadline. Not thread-safe.
 */
final class LossScene {
  /** How long each step may take; the loss normally arrives within 40 ms. */
  private static final Duration DEADLINE = Duration.ofSeconds(10);

  /** The backend holding a key in this database, and its application_name; ours excluded. */
  private static final String HOLDER_SQL = "SELECT l.pid, a.application_name FROM pg_locks l"
      + " JOIN pg_stat_activity a ON a.pid = l.pid"
      + " WHERE l.locktype = 'advisory' AND l.granted AND l.pid <> pg_backend_pid()"
      + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
      + " AND l.classid::bigint = ? AND l.objid::bigint = ? AND l.objsubid = ?";

  private final DataSource dataSource;
  private final String namespace;
  private final Console console;

  LossScene(DataSource dataSource, String namespace, Console console) {
    this.dataSource = dataSource;
    this.namespace = namespace;
    this.console = console;
  }

  /**
   * Plays the scene: {@code holder} takes {@code resource}, loses it, then {@code taker} takes it
   * (the same worker if the fleet has only one).
   *
   * @return true if the callback fired with CONNECTION_LOST and the taker got the lock
   * @throws SQLException if the demo's own connection fails
   */
  boolean run(DemoWorker holder, DemoWorker taker, String resource) throws SQLException, InterruptedException {
    console.plain("");
    Optional<LockHandle> taken = holder.locks().lock(resource).tryAcquire();
    if (taken.isEmpty()) {
      return failed(holder.name() + " could not take " + resource + " to start with");
    }
    LockHandle handle = taken.get();
    CompletableFuture<LossCause> signalled = new CompletableFuture<>();
    handle.onLoss(signalled::complete);
    try (handle; Connection c = dataSource.getConnection()) {
      Holder backend = holderOf(c, handle.key());
      String expectedPrefix = "pglock:" + holder.name() + ":";
      if (backend == null || !backend.applicationName().startsWith(expectedPrefix)
          || !backend.applicationName().endsWith(":" + namespace)) {
        return failed("the backend holding " + resource + " is not " + holder.name() + "'s lock session ("
            + (backend == null ? "none found in pg_locks" : backend) + "); not terminating anything");
      }
      console.event("connection loss: " + holder.name() + " holds " + resource + "; the demo ends its lock session ("
          + "backend pid " + backend.pid() + ", application_name " + backend.applicationName()
          + ") with pg_terminate_backend, as an administrator or a crash would");
      long start = System.nanoTime();
      if (!terminate(c, backend.pid())) {
        return failed("pg_terminate_backend(" + backend.pid() + ") returned false: the backend was already gone");
      }
      LossCause cause = await(signalled);
      if (cause == null) {
        return failed("onLoss did not fire within " + DEADLINE.toSeconds() + " s of pg_terminate_backend");
      }
      console.event("  " + holder.name() + "'s onLoss callback fired " + millisSince(start) + " ms later with cause "
          + cause + "; handle.state() is " + handle.state() + ", isHeld() " + handle.isHeld()
          + " (pglock also logs the loss as a WARN on standard error)");
      boolean retaken = takenAfterLoss(taker, resource, start);
      if (cause != LossCause.CONNECTION_LOST) {
        return failed("the cause was " + cause + ", expected CONNECTION_LOST");
      }
      return retaken;
    }
  }

  private boolean takenAfterLoss(DemoWorker taker, String resource, long start) throws InterruptedException {
    // A wait, not a try: pg_terminate_backend only signals the backend, which frees its locks as it exits.
    Optional<LockHandle> next = taker.locks().lock(resource).tryAcquire(DEADLINE);
    if (next.isEmpty()) {
      return failed(taker.name() + " could not take " + resource + " within " + DEADLINE.toSeconds() + " s");
    }
    try (LockHandle h = next.get()) {
      console.event("  " + taker.name() + " took " + resource + " " + millisSince(start) + " ms after the kill: "
          + "the server freed the lock when the backend ended");
    }
    return true;
  }

  private static Holder holderOf(Connection c, LockKey key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(HOLDER_SQL)) {
      // pg_locks shows a key as two unsigned 32-bit oids plus its key space (objsubid).
      ps.setLong(1, Integer.toUnsignedLong(key.first()));
      ps.setLong(2, Integer.toUnsignedLong(key.second()));
      ps.setInt(3, key.objsubid());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new Holder(rs.getInt(1), rs.getString(2)) : null;
      }
    }
  }

  /** True if the signal was sent; false if no such backend was left to signal. */
  private static boolean terminate(Connection c, int pid) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  /** The loss cause, or null if none came within the deadline. */
  private static LossCause await(CompletableFuture<LossCause> signalled) throws InterruptedException {
    try {
      return signalled.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      return null;
    } catch (ExecutionException e) {
      throw new IllegalStateException("the loss signal failed", e.getCause());
    }
  }

  private static long millisSince(long start) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  private boolean failed(String why) {
    console.event("connection loss: FAILED: " + why);
    return false;
  }

  private record Holder(int pid, String applicationName) {
    @Override
    public String toString() {
      return "pid " + pid + ", application_name " + applicationName;
    }
  }
}
