package io.pglock.dashboard.internal.data;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Advisory locks held and awaited now, from the view {@code <schema>.locks} (the server's
 * {@code pg_locks} with pglock's names), and the lock history.
 */
public final class LocksData {
  /** At most this many locks on one page: the view reads the server's lock table, bounded by its size. */
  public static final int MAX_LOCKS = 500;
  /** History rows per page. */
  public static final int HISTORY_PAGE = 50;

  private LocksData() {}

  /**
   * One lock held or awaited.
   *
   * @param namespace the lock's namespace, or null for a lock pglock did not name
   * @param name its name, or null
   * @param key the 64-bit key
   * @param mode exclusive or shared
   * @param granted held (true) or awaited
   * @param scope session, or session or transaction
   * @param pid the backend
   * @param node the pglock node of the backend, or null
   * @param role what the backend is for (lock, wait, jobs, ...), or null
   * @param application the backend's application_name
   * @param since held or awaited since
   * @param blockedBy the backends an awaited lock waits for
   */
  public record LockRow(String namespace, String name, long key, String mode, boolean granted, String scope, int pid,
      String node, String role, String application, Instant since, List<Integer> blockedBy) {
    /** {@return the name to show: namespace/name, or the key} */
    public String label() {
      return name == null ? "key " + key : namespace + " / " + name;
    }
  }

  /**
   * {@return locks held and awaited, awaited first, then oldest first}
   *
   * @param namespace only this namespace (the lock's or the holder's), or null
   * @param name only names containing this text, or null
   */
  public static List<LockRow> locks(Db db, String namespace, String name) throws SQLException {
    return db.list("SELECT namespace, name, key, mode, granted, scope, pid, node, role, application_name, since,"
        + " blocked_by FROM {s}.locks"
        + " WHERE (?::text IS NULL OR namespace = ? OR holder_namespace = ?)"
        + " AND (?::text IS NULL OR name LIKE '%' || ? || '%' ESCAPE '\\')"
        + " ORDER BY granted, since, pid LIMIT " + MAX_LOCKS, ps -> {
          ps.setString(1, namespace);
          ps.setString(2, namespace);
          ps.setString(3, namespace);
          String like = name == null ? null : name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
          ps.setString(4, like);
          ps.setString(5, like);
        }, LocksData::lock);
  }

  static LockRow lock(ResultSet rs) throws SQLException {
    List<Integer> blockedBy = new ArrayList<>();
    Array a = rs.getArray("blocked_by");
    if (a != null) {
      for (Integer pid : (Integer[]) a.getArray()) {
        blockedBy.add(pid);
      }
    }
    return new LockRow(rs.getString("namespace"), rs.getString("name"), rs.getLong("key"), rs.getString("mode"),
        rs.getBoolean("granted"), rs.getString("scope"), rs.getInt("pid"), rs.getString("node"),
        rs.getString("role"), rs.getString("application_name"), Db.instant(rs, "since"), List.copyOf(blockedBy));
  }

  /**
   * One hold in the lock history.
   *
   * @param id the hold's id
   * @param namespace the lock's namespace
   * @param name its name
   * @param node the holder's node
   * @param pid the holder's backend
   * @param acquiredAt when taken
   * @param releasedAt when it ended, or null while open
   * @param outcome open, released, failed, lost or disconnected
   * @param lossCause why lost, or null
   * @param errorClass the failed work's exception class, or null
   * @param errorMessage its message, or null
   * @param errorStack its stack, or null
   * @param cursor the keyset position after this row, in its page's order
   */
  public record HistoryRow(long id, String namespace, String name, String node, int pid, Instant acquiredAt,
      Instant releasedAt, String outcome, String lossCause, String errorClass, String errorMessage,
      String errorStack, String cursor) {
    /** {@return true for failed, lost and disconnected holds} */
    public boolean bad() {
      return !outcome.equals("released") && !outcome.equals("open");
    }
  }

  /**
   * A page of the lock history.
   *
   * @param rows the holds, at most a page
   * @param next the next page's cursor, or null at the end
   */
  public record HistoryPage(List<HistoryRow> rows, String next) {}

  /**
   * {@return a page of the lock history, newest first, each way along an index: one lock's holds by
   * acquisition (index lock_history_name); failed, lost and disconnected holds by acquisition (the
   * partial index lock_history_failed); otherwise holds that ended, by their end (index
   * lock_history_released; open holds are on the locks page), a namespace filter applied to at most
   * {@link JobsData#SCAN} of them per page}
   *
   * @param failedOnly only failed, lost and disconnected holds
   * @param namespace only this namespace, or null
   * @param name with {@code namespace}, only this lock, or null
   * @param after the cursor of the last row of the previous page, or null
   * @param limit rows per page
   */
  public static HistoryPage history(Db db, boolean failedOnly, String namespace, String name, Cursor after,
      int limit) throws SQLException {
    boolean byEnd = !failedOnly && name == null;
    String key = byEnd ? "released_at" : "acquired_at";
    String where = byEnd ? "released_at IS NOT NULL" : "true";
    if (failedOnly) {
      where += " AND outcome IN ('failed', 'lost', 'disconnected')";
    }
    List<Object> args = new ArrayList<>();
    if (name != null) {
      where += " AND namespace = ? AND name = ?";
      args.add(namespace);
      args.add(name);
    } else if (namespace != null && failedOnly) {
      where += " AND namespace = ?"; // failed holds are few: filtering them costs little
      args.add(namespace);
    }
    args.add(after == null ? Cursor.END_TIME : after.timestamp());
    args.add(after == null ? Long.MAX_VALUE : after.id());
    String inner = "SELECT id, namespace, name, node, pid, acquired_at, released_at, outcome, loss_cause, error_class,"
        + " error_message, error_stack FROM {s}.lock_history WHERE " + where + " AND (" + key + ", id) < (?, ?)"
        + " ORDER BY " + key + " DESC, id DESC LIMIT " + (byEnd && namespace != null ? JobsData.SCAN : limit + 1);
    String outer = byEnd && namespace != null ? "SELECT * FROM (" + inner + ") h WHERE namespace = ? LIMIT " + (limit + 1)
        : inner;
    List<Object> all = new ArrayList<>(args);
    if (byEnd && namespace != null) {
      all.add(namespace);
    }
    List<HistoryRow> rows = db.list(outer, ps -> bind(ps, all), rs -> {
      Instant acquired = Db.instant(rs, "acquired_at");
      Instant released = Db.instant(rs, "released_at");
      return new HistoryRow(rs.getLong("id"), rs.getString("namespace"), rs.getString("name"), rs.getString("node"),
          rs.getInt("pid"), acquired, released, rs.getString("outcome"), rs.getString("loss_cause"),
          rs.getString("error_class"), rs.getString("error_message"), rs.getString("error_stack"),
          Cursor.of(byEnd ? released : acquired, rs.getLong("id")));
    });
    if (rows.size() > limit) {
      return new HistoryPage(List.copyOf(rows.subList(0, limit)), rows.get(limit - 1).cursor());
    }
    if (byEnd && namespace != null) {
      // Fewer than a page matched: go on from the last row the bounded walk examined, if it was full.
      String next = db.one("SELECT count(*) AS n, (array_agg(released_at ORDER BY released_at, id))[1] AS t,"
          + " (array_agg(id ORDER BY released_at, id))[1] AS i FROM (" + inner + ") h", ps -> bind(ps, args),
          rs -> rs.getLong("n") < JobsData.SCAN ? null : Cursor.of(Db.instant(rs, "t"), rs.getLong("i"))).orElse(null);
      return new HistoryPage(List.copyOf(rows), next);
    }
    return new HistoryPage(List.copyOf(rows), null);
  }

  private static void bind(java.sql.PreparedStatement ps, List<Object> args) throws SQLException {
    for (int i = 0; i < args.size(); i++) {
      ps.setObject(i + 1, args.get(i));
    }
  }

  /** {@return the holds that ended badly (failed, lost, disconnected) in the last hour, newest first, at most 10} */
  public static List<HistoryRow> recentLosses(Db db) throws SQLException {
    return history(db, true, null, null, null, 10).rows().stream()
        .filter(h -> h.acquiredAt().isAfter(Instant.now().minusSeconds(3600))).toList();
  }

  /** {@return the first item if the list has one} */
  static <T> Optional<T> first(List<T> list) {
    return list.isEmpty() ? Optional.empty() : Optional.of(list.get(0));
  }
}
