package io.pglock.cli;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;

/**
 * Whether a scheduled task has a live node, judged from what the database knows now, for
 * {@code pglock tasks}. The scheduler keeps no row per node, so two facts decide:
 *
 * <ul>
 *   <li>running: the task's lock ({@code task:<name>} in its namespace, which a node holds while it
 *       claims or runs a slot) is held by a backend now;
 *   <li>live nodes: of the nodes that registered the task last or ran one of its latest
 *       {@value #RECENT_RUNS} runs, those with a pglock session connected to this database now
 *       ({@code application_name} {@code pglock:<node>:...}). A lock
 *       session of a node that crashed or was partitioned ends within its lease.
 * </ul>
 *
 * <p>What this cannot see: a node that registered the task but neither changed its schedule nor
 * ran it yet (another node always won) counts only once it runs a slot; a node whose
 * {@code PgLocks} is up but whose scheduler is stopped counts as live (node names are per process,
 * so any pglock session of the node counts, whatever its namespace).
 */
final class TaskLiveness {
  /** How many of a task's latest runs name the nodes that count. */
  static final int RECENT_RUNS = 100;

  /** A task as the database sees it now. */
  record Status(boolean running, Optional<String> runningNode, List<String> liveNodes, List<String> goneNodes,
      Optional<Instant> lastSeen) {
    boolean live() {
      return running || !liveNodes.isEmpty();
    }
  }

  private final DataSource dataSource;
  private final String schema;

  TaskLiveness(DataSource dataSource, String schema) {
    this.dataSource = dataSource;
    this.schema = schema;
  }

  /** The namespaces with at least one task, in order. */
  List<String> namespaces() throws SQLException {
    List<String> out = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT DISTINCT namespace FROM " + schema + ".scheduled_task"
            + " ORDER BY namespace");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  /** The status of each task of a namespace, by name. */
  Map<String, Status> of(String namespace) throws SQLException {
    Map<String, Status> out = new HashMap<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql())) {
      ps.setString(1, namespace);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Set<String> candidates = new LinkedHashSet<>(list(rs, "candidates"));
          Set<String> connected = new LinkedHashSet<>(list(rs, "connected"));
          List<String> live = candidates.stream().filter(connected::contains).toList();
          List<String> gone = candidates.stream().filter(n -> !connected.contains(n)).toList();
          java.sql.Timestamp seen = rs.getTimestamp("last_seen");
          out.put(rs.getString("name"), new Status(rs.getBoolean("running"), Optional.ofNullable(rs.getString("runner")),
              live, gone, Optional.ofNullable(seen).map(java.sql.Timestamp::toInstant)));
        }
      }
    }
    return out;
  }

  private static List<String> list(ResultSet rs, String column) throws SQLException {
    java.sql.Array a = rs.getArray(column);
    if (a == null) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    for (Object o : (Object[]) a.getArray()) {
      if (o != null) {
        out.add((String) o);
      }
    }
    return out;
  }

  /**
   * One statement per namespace: each task, whether its lock is held, the node of its running row,
   * the candidate nodes (the last registrant and the nodes of its latest runs, newest first), when
   * a node last ran it, and the nodes with a pglock session of the namespace connected now.
   */
  private String sql() {
    return "WITH connected AS (SELECT array_agg(DISTINCT split_part(application_name, ':', 2)) AS nodes"
        + "   FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'pglock:%')"
        + " SELECT t.name,"
        + "   EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
        + "     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        + "     AND (l.classid::bigint << 32 | l.objid::bigint) = " + schema + ".key(t.namespace, 'task:' || t.name))"
        + "     AS running,"
        + "   (SELECT r.node FROM " + schema + ".task_run r WHERE r.namespace = t.namespace AND r.task = t.name"
        + "     AND r.state = 'running' ORDER BY r.slot DESC LIMIT 1) AS runner,"
        + "   ARRAY(SELECT n FROM (SELECT t.updated_by AS n, 0 AS o UNION ALL"
        + "     SELECT r.node, row_number() OVER () FROM (SELECT node FROM " + schema + ".task_run r"
        + "       WHERE r.namespace = t.namespace AND r.task = t.name ORDER BY r.slot DESC LIMIT " + RECENT_RUNS
        + "     ) r) x WHERE n IS NOT NULL AND n NOT LIKE 'pglock-cli:%' GROUP BY n ORDER BY min(o)) AS candidates,"
        + "   (SELECT max(coalesce(r.finished_at, r.started_at)) FROM (SELECT finished_at, started_at FROM "
        + schema + ".task_run r WHERE r.namespace = t.namespace AND r.task = t.name ORDER BY r.slot DESC LIMIT 1) r)"
        + "     AS last_seen,"
        + "   (SELECT nodes FROM connected) AS connected"
        + " FROM " + schema + ".scheduled_task t WHERE t.namespace = ?";
  }
}
