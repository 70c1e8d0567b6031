package io.pglock.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.postgresql.PGConnection;

/**
 * The server backends this JVM opened through {@link TestDatabase}: the only ones a leak check may
 * look at, since the server is shared with other clients (other test runs, other tools).
 *
 * <p>The pid comes from the connection's startup data ({@link PGConnection#getBackendPID()}), so
 * recording costs no statement. A pid whose backend has ended is forgotten at the next check, before
 * the operating system can hand it to someone else's backend.
 */
public final class OwnedBackends {
  private static final Set<Integer> PIDS = ConcurrentHashMap.newKeySet();

  private static final String ALIVE = "SELECT pid FROM pg_stat_activity WHERE pid = ANY (?)";

  private OwnedBackends() {}

  /**
   * Records the backend of a connection this JVM opened.
   *
   * @param c a connection to the test database; one that is not pgjdbc's is returned unrecorded
   * @return the connection
   * @throws SQLException if the connection cannot be unwrapped
   */
  public static Connection record(Connection c) throws SQLException {
    if (c.isWrapperFor(PGConnection.class)) {
      PIDS.add(c.unwrap(PGConnection.class).getBackendPID());
    }
    return c;
  }

  /**
   * A DataSource whose connections' backends are recorded here, for one a test made itself.
   *
   * @param target the data source to wrap
   * @return a data source that records every connection it opens
   */
  public static javax.sql.DataSource recording(javax.sql.DataSource target) {
    return new RecordingDataSource(target);
  }

  /**
   * Records a backend by pid (for connections that did not come from {@link TestDatabase}).
   *
   * @param pid the backend's process id ({@code pg_backend_pid()})
   */
  public static void record(int pid) {
    PIDS.add(pid);
  }

  /** The recorded backends still alive, as seen by the given connection; forgets the others. */
  static Integer[] alive(Connection c) throws SQLException {
    Integer[] recorded = PIDS.toArray(new Integer[0]);
    Set<Integer> alive = ConcurrentHashMap.newKeySet();
    try (PreparedStatement ps = c.prepareStatement(ALIVE)) {
      ps.setArray(1, c.createArrayOf("int4", recorded));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          alive.add(rs.getInt(1));
        }
      }
    }
    for (Integer pid : recorded) {
      if (!alive.contains(pid)) {
        PIDS.remove(pid);
      }
    }
    return alive.toArray(new Integer[0]);
  }
}
