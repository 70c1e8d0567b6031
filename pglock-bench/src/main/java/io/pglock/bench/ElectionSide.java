package io.pglock.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One system at one setting in B8 (pglock; Curator's LeaderLatch default or tuned; Spring's
 * LockRegistryLeaderInitiator default or tuned): how to start its contenders, which faults apply,
 * how long a failover should take, and how the parent sees that the standbys are in line.
 */
interface ElectionSide extends AutoCloseable {
  /** {@return the system's name for the table} */
  String system();

  /** {@return the setting's short name for the table: "default", "tuned", "lease 5 s"} */
  String setting();

  /** {@return the settings in full, for the notes} */
  String settings();

  /** {@return {@link ContenderMain}'s options for one contender of this side} */
  List<String> contenderArgs(String election, String node);

  /** {@return why a fault does not apply to this system, or null if it does} */
  String notApplicable(Fault fault);

  /** {@return about how long a failover should take after the fault, by design (0: at once)} */
  Duration expected(Fault fault);

  /** {@return how long a trial waits for a new leader before it counts as timed out} */
  default Duration timeout(Fault fault) {
    Duration e = expected(fault);
    return e.plus(e.dividedBy(2)).plusSeconds(5);
  }

  /** {@return whether its contenders talk to the database, so that their statements can be counted} */
  default boolean countsStatements() {
    return true;
  }

  /**
   * Whether a leader that lost its term and said so (after pg_terminate_backend, or a pause) stands
   * for election again. When it does not, the trial's aftermath replaces it by a fresh JVM, as after a
   * SIGKILL, so that the next trial starts from three contenders in line.
   */
  default boolean revokedLeaderStandsAgain() {
    return true;
  }

  /** Whether every standby of the fleet is in line, as far as the parent can see beyond its events. */
  boolean standbysInLine(Fleet fleet, Connection monitor) throws Exception;

  /** {@return the pids of the leader's backends that {@link Fault#TERMINATE} terminates} */
  default List<Integer> backendsToTerminate(Contender leader, Connection monitor) throws SQLException {
    throw new UnsupportedOperationException(notApplicable(Fault.TERMINATE));
  }

  @Override
  default void close() {}

  /** The pids returned by a query with one string parameter. */
  static List<Integer> pids(Connection monitor, String sql, String param) throws SQLException {
    List<Integer> pids = new ArrayList<>();
    try (PreparedStatement ps = monitor.prepareStatement(sql)) {
      ps.setString(1, param);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          pids.add(rs.getInt(1));
        }
      }
    }
    return pids;
  }

  /** Database options common to the contenders that connect to PostgreSQL. */
  static List<String> dbArgs(Db db) {
    String user = db.options().url().contains("user=") ? "" : db.options().user();
    return List.of("url=" + db.options().url(), "user=" + user);
  }
}
