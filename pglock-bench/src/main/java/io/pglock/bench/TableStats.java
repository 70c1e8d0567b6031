package io.pglock.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * What a queue's tables look like after its burn-down, summed over the tables a contender names:
 * {@code pg_stat_user_tables}' tuple counts (estimates, complete only once the sessions that wrote
 * them have ended, which B10 waits for), the rows left (counted) and {@code pg_total_relation_size}
 * (exact: heap, indexes and TOAST).
 *
 * @param dead n_dead_tup: versions left for vacuum to reclaim
 * @param rows rows in the tables, counted ({@code count(*)}; not n_live_tup, which ANALYZE sets and an
 *     insert's late-reported count then raises again)
 * @param updates n_tup_upd since the table was created (preparing a queue only inserts)
 * @param hotUpdates n_tup_hot_upd, the updates that touched no index
 * @param deletes n_tup_del
 * @param autovacuums autovacuum_count: autovacuum runs on the tables, during the burn-down or before
 * @param bytes pg_total_relation_size
 */
record TableStats(long dead, long rows, long updates, long hotUpdates, long deletes, long autovacuums, long bytes) {

  static TableStats of(Connection c, List<String> tables) throws SQLException {
    long dead = 0;
    long rows = 0;
    long upd = 0;
    long hot = 0;
    long del = 0;
    long vac = 0;
    long bytes = 0;
    for (String table : tables) {
      try (PreparedStatement ps = c.prepareStatement("""
          SELECT n_dead_tup, (SELECT count(*) FROM %s), n_tup_upd, n_tup_hot_upd, n_tup_del, autovacuum_count,
                 pg_total_relation_size(relid)
            FROM pg_stat_user_tables WHERE relid = ?::regclass""".formatted(table))) {
        ps.setString(1, table);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            throw new SQLException("no statistics for table " + table);
          }
          dead += rs.getLong(1);
          rows += rs.getLong(2);
          upd += rs.getLong(3);
          hot += rs.getLong(4);
          del += rs.getLong(5);
          vac += rs.getLong(6);
          bytes += rs.getLong(7);
        }
      }
    }
    return new TableStats(dead, rows, upd, hot, del, vac, bytes);
  }

  /**
   * {@return these figures with the counters (updates, HOT updates, deletes, autovacuums) taken since
   * {@code before}: what happened in between, on a table that may have been in use long before}
   */
  TableStats since(TableStats before) {
    return new TableStats(dead, rows, updates - before.updates, hotUpdates - before.hotUpdates,
        deletes - before.deletes, autovacuums - before.autovacuums, bytes);
  }

  static String mib(long bytes) {
    return Report.fmt("%.1f MiB", bytes / (1024.0 * 1024.0));
  }
}
