package io.pglock.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension: after each test, fails the test if any advisory lock is still held in the
 * test database by a backend this JVM opened through {@link TestDatabase} (pglock's lock sessions
 * built on its data sources, and the tests' own connections; see {@link OwnedBackends}). Locks of
 * other clients of the shared server, and of child processes, are not this check's business: tests
 * of child processes assert on the server's lock table themselves.
 *
 * <p>pglock may release asynchronously after a handle is closed, so the check waits for the locks
 * to go, up to {@link #GRACE}, before it fails. It never sleeps longer than needed: it polls.
 */
public final class NoLeakedLocks implements AfterEachCallback {

  /** How long released locks may take to leave the server before they count as leaked. */
  public static final Duration GRACE = Duration.ofSeconds(5);

  /** The extension, as JUnit creates it for {@code @ExtendWith(NoLeakedLocks.class)}. */
  public NoLeakedLocks() {
    // no state: every check reads the server
  }

  private static final String HELD = """
      SELECT a.application_name, l.pid, l.mode, l.classid, l.objid, l.objsubid
        FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.granted
         AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND l.pid = ANY (?)
         AND l.pid <> pg_backend_pid()
       ORDER BY l.pid
      """;

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    List<String> leaked = waitForNoHeldLocks(GRACE);
    if (!leaked.isEmpty()) {
      throw new AssertionError("advisory locks still held " + GRACE.toSeconds()
          + " s after " + context.getDisplayName() + ": " + leaked);
    }
  }

  /**
   * Waits until no test session holds an advisory lock, or the timeout passes.
   *
   * @param timeout the longest to wait
   * @return the locks still held at the end (empty when none)
   * @throws SQLException if the test database cannot be queried
   */
  public static List<String> waitForNoHeldLocks(Duration timeout) throws SQLException {
    long deadline = System.nanoTime() + timeout.toNanos();
    try (Connection c = TestDatabase.get().connect()) {
      while (true) {
        List<String> held = heldLocks(c);
        if (held.isEmpty() || System.nanoTime() - deadline >= 0) {
          return held;
        }
        try {
          Thread.sleep(20); // poll interval of a condition wait, not synchronisation
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return held;
        }
      }
    }
  }

  /**
   * The advisory locks this JVM's backends hold right now, one description per lock.
   *
   * @param c a connection to the test database (its own locks are not counted)
   * @return one line per lock: backend, mode and key
   * @throws SQLException if the query fails
   */
  public static List<String> heldLocks(Connection c) throws SQLException {
    List<String> held = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(HELD)) {
      ps.setArray(1, c.createArrayOf("int4", OwnedBackends.alive(c)));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          held.add(rs.getString(1) + "(pid " + rs.getInt(2) + ") " + rs.getString(3)
              + " classid=" + rs.getLong(4) + " objid=" + rs.getLong(5) + " objsubid=" + rs.getInt(6));
        }
      }
    }
    return held;
  }
}
