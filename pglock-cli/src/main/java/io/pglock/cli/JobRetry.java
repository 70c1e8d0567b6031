package io.pglock.cli;

import io.pglock.SchemaMissingException;
import io.pglock.queue.JobQueueException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import java.util.zip.CRC32;
import javax.sql.DataSource;

/**
 * {@code pglock jobs retry ID} as one statement whose RETURNING row is what the confirmation says.
 * {@code JobAdmin.retry} answers only true or false, and reading the job afterwards races the
 * workers: a worker that claimed it in between made the command print "attempt 4 next" for a job
 * whose next attempt was 3. The statement is {@code DefaultJobAdmin.retry}'s, including the
 * NOTIFY that wakes the queue's workers; {@code JobAdmin.retry} returning the row would let this
 * copy go (see docs/cli.md).
 */
final class JobRetry {
  /** What the UPDATE returned: the job's queue and the attempt its next claim starts. */
  record Retried(String queue, int nextAttempt, Integer maxAttempts) {}

  private final DataSource dataSource;
  private final String schema;

  JobRetry(DataSource dataSource, String schema) {
    this.dataSource = dataSource;
    this.schema = schema;
  }

  /**
   * Makes a discarded or cancelled job available now, with at least one more attempt.
   *
   * @return the row as the statement left it, or empty if the job is missing or in another state
   * @throws JobQueueException if an unfinished job holds the same unique key, or the statement failed
   * @throws SchemaMissingException if the job table is missing
   */
  Optional<Retried> retry(long id) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("UPDATE " + schema + ".job SET state = 'available',"
            + " run_at = now(), finished_at = NULL, cancel_requested_at = NULL,"
            + " max_attempts = CASE WHEN max_attempts IS NOT NULL AND attempt >= max_attempts THEN attempt + 1"
            + "   ELSE max_attempts END"
            + " WHERE id = ? AND state IN ('discarded', 'cancelled')"
            + " RETURNING queue, attempt, max_attempts, pg_notify(?, queue || ' 0 0')")) {
      ps.setLong(1, id);
      ps.setString(2, channel(schema));
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        String queue = rs.getString(1);
        int attempt = rs.getInt(2);
        int max = rs.getInt(3);
        Integer maxAttempts = rs.wasNull() ? null : max;
        return Optional.of(new Retried(queue, attempt + 1, maxAttempts));
      }
    } catch (SQLException e) {
      if ("23505".equals(e.getSQLState())) {
        throw new JobQueueException("could not retry job " + id + ": an unfinished job holds its unique key; wait "
            + "for that one to finish, or cancel it first", e);
      }
      if ("42P01".equals(e.getSQLState()) || "3F000".equals(e.getSQLState())) {
        throw new SchemaMissingException("the job table " + schema + ".job is missing: run "
            + "PgLockSchema.migrate(dataSource, \"" + schema + "\") (schema version 9 or later)");
      }
      throw new JobQueueException("could not retry job " + id + ": " + e.getMessage() + " (SQLSTATE "
          + e.getSQLState() + ")", e);
    }
  }

  /** The queue's NOTIFY channel for a schema, as {@code DefaultJobQueue.channel} names it. */
  static String channel(String schema) {
    CRC32 crc = new CRC32();
    crc.update(schema.getBytes(StandardCharsets.UTF_8));
    return "pglock_jobs_" + Long.toHexString(crc.getValue());
  }
}
