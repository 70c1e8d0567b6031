package io.pglock.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one system did with the slots of B9's measured window (whole seconds {@code from} to
 * {@code to}, both included), read from the results table after the run: how many slots were run
 * once, twice or more, or never, and how late each run started. For pglock, its {@code task_run}
 * rows add what the scheduler recorded: slots skipped by design (a missed-slot or overlap policy),
 * catch-up runs, the state of a slot that never ran, and the lateness by the claim's {@code now()}.
 *
 * @param slots slots in the window
 * @param once slots run exactly once
 * @param twice slots run twice or more
 * @param never slots run by no node
 * @param neverStates for pglock, the never-run slots by what task_run says of them ("skipped: ..."
 *     for a skip by design, "running", "failed", ..., or "no row")
 * @param doubles the first slots run twice or more, with their nodes
 * @param neverRuns the never-run slots, as ranges
 * @param neverSlots the never-run slots
 * @param catchUp pglock: catch-up runs in the window
 * @param lateMillis start minus slot label, per run counted for lateness (pglock: scheduled runs, by
 *     task_run; ShedLock: every run, by the results table)
 * @param early runs that started before their slot's time by the database's clock
 * @param runsByNode runs per node
 */
record SlotCount(int slots, int once, int twice, int never, Map<String, Integer> neverStates, List<String> doubles,
    String neverRuns, List<Instant> neverSlots, int catchUp, double[] lateMillis, int early, Map<String, Integer> runsByNode) {

  /** Never-run slots that task_run records as skipped: by design, not a failure. */
  int neverSkipped() {
    return neverWhere("skipped");
  }

  /**
   * Never-run slots whose run started and was cut by a fault before its write landed: task_run
   * says disconnected (the runner died, or lost the server, mid-run) or interrupted. pglock promises
   * that a slot starts once, not that a started run survives its node or server.
   */
  int neverCut() {
    return neverWhere("disconnected") + neverWhere("interrupted");
  }

  private int neverWhere(String statePrefix) {
    return neverStates.entrySet().stream().filter(e -> e.getKey().startsWith(statePrefix))
        .mapToInt(Map.Entry::getValue).sum();
  }

  static SlotCount of(Connection c, String system, Instant from, Instant to, boolean pglock) throws SQLException {
    Map<Instant, List<String>> runs = runs(c, system, from, to);
    Map<Instant, String> rows = pglock ? taskRuns(c, from, to) : Map.of();
    int once = 0;
    int twice = 0;
    List<String> doubles = new ArrayList<>();
    List<Instant> neverList = new ArrayList<>();
    Map<String, Integer> neverStates = new TreeMap<>();
    for (Instant s = from; !s.isAfter(to); s = s.plusSeconds(1)) {
      List<String> nodes = runs.getOrDefault(s, List.of());
      if (nodes.size() == 1) {
        once++;
      } else if (nodes.size() > 1) {
        twice++;
        if (doubles.size() < 10) {
          doubles.add(s + " by " + nodes);
        }
      } else {
        neverList.add(s);
        if (pglock) {
          neverStates.merge(rows.getOrDefault(s, "no row"), 1, Integer::sum);
        }
      }
    }
    int slots = (int) (to.getEpochSecond() - from.getEpochSecond() + 1);
    Map<String, Integer> byNode = new TreeMap<>();
    runs.values().forEach(ns -> ns.forEach(n -> byNode.merge(n, 1, Integer::sum)));
    Timestamp f = Timestamp.from(from);
    Timestamp t = Timestamp.from(to);
    String ns = PglockTicker.NAMESPACE;
    String task = PglockTicker.TASK;
    double[] late = pglock
        ? doubles(c, "SELECT extract(epoch FROM started_at - slot) * 1000 FROM pglock.task_run WHERE namespace = ?"
            + " AND task = ? AND kind = 'scheduled' AND state <> 'skipped' AND slot BETWEEN ? AND ?", ns, task, f, t)
        : doubles(c, "SELECT extract(epoch FROM started_at - slot) * 1000 FROM " + SlotResults.TABLE
            + " WHERE system = ? AND slot BETWEEN ? AND ?", system, f, t);
    int early = pglock
        ? count(c, "SELECT count(*) FROM pglock.task_run WHERE namespace = ? AND task = ? AND started_at < slot"
            + " AND slot BETWEEN ? AND ?", ns, task, f, t)
        : count(c, "SELECT count(*) FROM " + SlotResults.TABLE + " WHERE system = ? AND started_at < slot"
            + " AND slot BETWEEN ? AND ?", system, f, t);
    int catchUp = pglock ? count(c, "SELECT count(*) FROM pglock.task_run WHERE namespace = ? AND task = ?"
        + " AND kind = 'catch_up' AND state <> 'skipped' AND slot BETWEEN ? AND ?", ns, task, f, t) : 0;
    return new SlotCount(slots, once, twice, neverList.size(), neverStates, doubles, ranges(neverList),
        List.copyOf(neverList), catchUp, late, early, byNode);
  }

  /** The nodes that ran each slot of the window (a node once per run). */
  private static Map<Instant, List<String>> runs(Connection c, String system, Instant from, Instant to)
      throws SQLException {
    Map<Instant, List<String>> runs = new TreeMap<>();
    try (PreparedStatement ps = bind(c, "SELECT slot, node FROM " + SlotResults.TABLE
        + " WHERE system = ? AND slot BETWEEN ? AND ? ORDER BY slot, started_at", system, Timestamp.from(from),
        Timestamp.from(to)); ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        runs.computeIfAbsent(rs.getTimestamp(1).toInstant(), k -> new ArrayList<>()).add(rs.getString(2));
      }
    }
    return runs;
  }

  /**
   * pglock's rows of the seconds before a slot up to it, one line each (state, kind, node, attempt,
   * times, detail): what the scheduler did around a slot that never ran.
   */
  static List<String> taskRunsBefore(Connection c, Instant slot, int seconds) throws SQLException {
    List<String> lines = new ArrayList<>();
    try (PreparedStatement ps = bind(c, "SELECT slot, state, kind, node, attempt, started_at, finished_at, noticed_at,"
        + " coalesce(detail, '') FROM pglock.task_run WHERE namespace = ? AND task = ? AND slot BETWEEN ? AND ?"
        + " ORDER BY slot", PglockTicker.NAMESPACE, PglockTicker.TASK, Timestamp.from(slot.minusSeconds(seconds)),
        Timestamp.from(slot)); ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        lines.add(rs.getTimestamp(1).toInstant() + " " + rs.getString(2) + " " + rs.getString(3) + " by "
            + rs.getString(4) + " attempt " + rs.getInt(5) + ", started " + instant(rs.getTimestamp(6)) + ", finished "
            + instant(rs.getTimestamp(7)) + ", noticed " + instant(rs.getTimestamp(8)) + ": " + rs.getString(9));
      }
    }
    return lines;
  }

  private static String instant(Timestamp t) {
    return t == null ? "-" : t.toInstant().toString();
  }

  /** pglock's own record of each slot: its state, and for a skip why. */
  private static Map<Instant, String> taskRuns(Connection c, Instant from, Instant to) throws SQLException {
    Map<Instant, String> rows = new TreeMap<>();
    try (PreparedStatement ps = bind(c, "SELECT slot, state, kind, coalesce(detail, '') FROM pglock.task_run"
        + " WHERE namespace = ? AND task = ? AND slot BETWEEN ? AND ?", PglockTicker.NAMESPACE, PglockTicker.TASK,
        Timestamp.from(from), Timestamp.from(to)); ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        String state = rs.getString(2);
        String why = rs.getString(4);
        rows.put(rs.getTimestamp(1).toInstant(), state.equals("skipped")
            ? "skipped: " + why.replaceFirst(":.*", "") : state + " (" + rs.getString(3) + ")");
      }
    }
    return rows;
  }

  private static double[] doubles(Connection c, String sql, Object... params) throws SQLException {
    List<Double> v = new ArrayList<>();
    try (PreparedStatement ps = bind(c, sql, params); ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        v.add(rs.getDouble(1));
      }
    }
    return v.stream().mapToDouble(Double::doubleValue).toArray();
  }

  private static int count(Connection c, String sql, Object... params) throws SQLException {
    try (PreparedStatement ps = bind(c, sql, params); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static PreparedStatement bind(Connection c, String sql, Object... params) throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    try {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      return ps;
    } catch (SQLException | RuntimeException e) {
      ps.close();
      throw e;
    }
  }

  /** Consecutive seconds as ranges: {@code 12:00:01Z-12:00:05Z (5), 12:01:10Z (1)}. */
  private static String ranges(List<Instant> seconds) {
    StringBuilder b = new StringBuilder();
    int i = 0;
    while (i < seconds.size()) {
      int j = i;
      while (j + 1 < seconds.size() && seconds.get(j + 1).equals(seconds.get(j).plusSeconds(1))) {
        j++;
      }
      b.append(b.length() == 0 ? "" : ", ").append(seconds.get(i));
      if (j > i) {
        b.append('-').append(seconds.get(j));
      }
      b.append(" (").append(j - i + 1).append(')');
      i = j + 1;
    }
    return b.length() == 0 ? "none" : b.toString();
  }
}
