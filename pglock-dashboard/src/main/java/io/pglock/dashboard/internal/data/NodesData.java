package io.pglock.dashboard.internal.data;

import java.sql.SQLException;
import java.time.Instant;
import java.util.List;

/** The fleet's nodes as the server sees them: pglock's connections in {@code pg_stat_activity}. */
public final class NodesData {
  private NodesData() {}

  /**
   * One node.
   *
   * @param node its pglock node name
   * @param sessions its pglock connections
   * @param held advisory locks it holds
   * @param waiting advisory locks it waits for
   * @param since its oldest connection's start
   */
  public record Node(String node, int sessions, int held, int waiting, Instant since) {}

  /** {@return the nodes with pglock connections to this database, at most 500} */
  public static List<Node> nodes(Db db) throws SQLException {
    return db.list("SELECT split_part(a.application_name, ':', 2) AS node, count(DISTINCT a.pid) AS sessions,"
        + " count(l.pid) FILTER (WHERE l.granted) AS held, count(l.pid) FILTER (WHERE NOT l.granted) AS waiting,"
        + " min(a.backend_start) AS since"
        + " FROM pg_stat_activity a LEFT JOIN pg_locks l ON l.pid = a.pid AND l.locktype = 'advisory'"
        + " WHERE a.datname = current_database() AND a.application_name LIKE 'pglock:%'"
        + " GROUP BY 1 ORDER BY 1 LIMIT 500", ps -> {},
        rs -> new Node(rs.getString("node"), rs.getInt("sessions"), rs.getInt("held"), rs.getInt("waiting"),
            Db.instant(rs, "since")));
  }
}
