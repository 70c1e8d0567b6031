package io.pglock.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What a B9 task run does: one row in {@value #TABLE} (system, node, the slot's label, and
 * {@code clock_timestamp()} as the start). Each run has an id of its own, and the row is inserted
 * with {@code ON CONFLICT (run_id) DO NOTHING}: a write retried after a connection failure (the
 * server restart may eat the answer of a committed insert) counts once, so a slot seen twice in the
 * table was run twice by its scheduler, never written twice by this class.
 */
final class SlotResults implements AutoCloseable {
  static final String TABLE = "b9_slot_run";
  /** Tries of one write: a connection that the restart broke is replaced by the pool on the next. */
  private static final int TRIES = 5;
  private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  private final HikariDataSource pool;
  private final String system;
  private final String node;

  SlotResults(HikariDataSource pool, String system, String node) {
    this.pool = pool;
    this.system = system;
    this.node = node;
  }

  /** The table, created by the parent before any node starts. */
  static String ddl() {
    return "CREATE TABLE " + TABLE + " (run_id uuid PRIMARY KEY, system text NOT NULL, node text NOT NULL,"
        + " slot timestamptz NOT NULL, started_at timestamptz NOT NULL)";
  }

  /** Records one run of the slot labelled {@code slot}; throws if every try failed. */
  void record(Instant slot) {
    UUID run = UUID.randomUUID();
    for (int attempt = 1; ; attempt++) {
      try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement("INSERT INTO " + TABLE
          + " (run_id, system, node, slot, started_at) VALUES (?, ?, ?, ?, clock_timestamp())"
          + " ON CONFLICT (run_id) DO NOTHING")) {
        ps.setObject(1, run);
        ps.setString(2, system);
        ps.setString(3, node);
        ps.setTimestamp(4, Timestamp.from(slot));
        ps.executeUpdate();
        return;
      } catch (SQLException e) {
        if (attempt >= TRIES) {
          throw new IllegalStateException("could not record slot " + slot + " after " + TRIES + " tries: " + e, e);
        }
        LockSupport.parkNanos(RETRY_PAUSE_NANOS); // pacing between tries, not a wait for anything
      }
    }
  }

  @Override
  public void close() {
    pool.close();
  }
}
