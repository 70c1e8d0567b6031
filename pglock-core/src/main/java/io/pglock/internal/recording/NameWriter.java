package io.pglock.internal.recording;

import io.pglock.LockKey;
import io.pglock.internal.Sql;
import io.pglock.internal.SqlErrors;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;

/**
 * The statements of {@link NameRecorder}: names in batches, and the prune. Used by the recorder's
 * thread only.
 *
 * <p>A batch the server refuses for its data (SQLSTATE class 22, such as a character the database
 * cannot store) is split in halves until the offending name is alone, which is dropped with a
 * warning: one bad name must not keep the innocent names of its batch out of the view. A schema
 * older than version 10 has no {@code record_locked_names} nor {@code prune_lock_names}: the writer
 * then records only the names it knows to be held, and does not prune.
 */
final class NameWriter {
  /** SQLSTATE class of errors in the data: the batch is split, not retried. */
  static final String DATA_EXCEPTION = "22";
  /** A function of version 10 is missing: the schema is older. */
  static final String UNDEFINED_FUNCTION = "42883";

  private final String schema;
  private final BackgroundBatches<?> connections;
  private final Logger log;
  /** The schema is older than version 10 (found at the first statement that needs it). */
  private boolean beforeVersion10;

  NameWriter(String schema, BackgroundBatches<?> connections, Logger log) {
    this.schema = schema;
    this.connections = connections;
    this.log = log;
  }

  /**
   * Records names in statements of at most {@link NameRecorder#MAX_BATCH}.
   *
   * @param onlyIfLocked let the server record only the names whose key is locked now
   * @return false if the database could not be reached or failed otherwise than on the data: the
   *     names may be offered again
   */
  boolean record(List<LockKey> keys, boolean onlyIfLocked) {
    if (keys.isEmpty() || (onlyIfLocked && beforeVersion10)) {
      return true;
    }
    List<LockKey> storable = keys.stream().filter(k -> k.name().indexOf('\0') < 0).toList();
    if (storable.size() < keys.size()) {
      log.warn("not recording {} lock name(s) containing NUL (U+0000), which PostgreSQL cannot store", keys.size()
          - storable.size());
    }
    for (int from = 0; from < storable.size(); from += NameRecorder.MAX_BATCH) {
      if (!writeSplitting(storable.subList(from, Math.min(storable.size(), from + NameRecorder.MAX_BATCH)),
          onlyIfLocked)) {
        return false;
      }
    }
    return true;
  }

  private boolean writeSplitting(List<LockKey> batch, boolean onlyIfLocked) {
    try {
      connections.withConnection(c -> write(c, batch, onlyIfLocked));
      return true;
    } catch (SQLException e) {
      if (onlyIfLocked && SqlErrors.state(e).equals(UNDEFINED_FUNCTION)) {
        beforeVersion10 = true;
        log.debug("the schema {} is older than version 10: the names of transaction locks are not recorded, and "
            + "nothing prunes {}.lock_name; run PgLockSchema.migrate", schema, schema);
        return true;
      }
      if (!SqlErrors.state(e).startsWith(DATA_EXCEPTION)) {
        connections.failed("record " + batch.size() + " lock name(s) in " + schema + ".lock_name", e);
        return false;
      }
      if (batch.size() == 1) {
        LockKey k = batch.get(0);
        log.warn("the lock name {} in namespace {} cannot be recorded, so its lock shows by its key {} only ({})",
            quoted(k.name()), k.namespace(), k.int64(), SqlErrors.describe(e));
        return true;
      }
      int half = batch.size() / 2;
      return writeSplitting(batch.subList(0, half), onlyIfLocked)
          & writeSplitting(batch.subList(half, batch.size()), onlyIfLocked);
    } catch (RuntimeException e) {
      connections.failed("record " + batch.size() + " lock name(s) in " + schema + ".lock_name", e);
      return false;
    }
  }

  private void write(Connection c, List<LockKey> batch, boolean onlyIfLocked) throws SQLException {
    int n = batch.size();
    Long[] keys = new Long[n];
    String[] namespaces = new String[n];
    String[] names = new String[n];
    for (int i = 0; i < n; i++) {
      keys[i] = batch.get(i).int64();
      namespaces[i] = batch.get(i).namespace();
      names[i] = batch.get(i).name();
    }
    try (PreparedStatement ps = c.prepareStatement(onlyIfLocked ? Sql.recordLockedNames(schema)
        : Sql.recordNames(schema))) {
      int p = 1;
      if (onlyIfLocked) {
        ps.setArray(p++, c.createArrayOf("bigint", keys));
      }
      ps.setArray(p++, c.createArrayOf("text", namespaces));
      ps.setArray(p, c.createArrayOf("text", names));
      ps.execute();
    }
  }

  /**
   * Asks the server to prune: at most {@code statements} statements of {@code batch} rows, while
   * each deletes a full batch.
   */
  void prune(Duration retention, int maxRows, int batch, int statements) {
    if (beforeVersion10) {
      return;
    }
    try {
      connections.withConnection(c -> {
        try (PreparedStatement ps = c.prepareStatement(Sql.pruneNames(schema))) {
          ps.setString(1, retention.toSeconds() + " seconds");
          ps.setInt(2, maxRows);
          ps.setInt(3, batch);
          int total = 0;
          for (int i = 0; i < statements; i++) {
            int deleted;
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              deleted = rs.getInt(1);
            }
            total += deleted;
            if (deleted < batch) {
              break;
            }
          }
          if (total > 0) {
            log.debug("pruned {} lock name(s) from {}.lock_name", total, schema);
          }
        }
      });
    } catch (SQLException e) {
      if (SqlErrors.state(e).equals(UNDEFINED_FUNCTION)) {
        beforeVersion10 = true;
        return;
      }
      connections.failed("prune " + schema + ".lock_name", e);
    } catch (RuntimeException e) {
      connections.failed("prune " + schema + ".lock_name", e);
    }
  }

  private static String quoted(String name) {
    String shown = name.length() > 60 ? name.substring(0, 60) + "..." : name;
    return "\"" + shown.replace("\0", "\\0") + "\"";
  }
}
