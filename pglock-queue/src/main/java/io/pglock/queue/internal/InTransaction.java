package io.pglock.queue.internal;

import io.pglock.queue.TransactionalJobHandler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Runs a {@link TransactionalJobHandler}: a connection from the data source, a transaction, the
 * handler, then the job's success written in that transaction, and the commit, made durable
 * whatever {@code synchronous_commit} says, as the claims are.
 *
 * <p>Why the write decides: the UPDATE (a DELETE when the worker keeps no succeeded job; it locks the
 * row the same way) matches only while the row is running at this attempt under
 * this claim's owner, and it holds the row until the commit. A rescue or a claim of the job by
 * another worker updates that row too, so one of the two waits for the other: if the rescue came
 * first, the UPDATE matches nothing and everything rolls back; if the UPDATE came first, the rescue
 * finds the job succeeded once the commit is done.
 */
final class InTransaction {
  private InTransaction() {}

  /** The attempt no longer owned the job when it came to commit: nothing was committed. */
  static final class NotOwned extends Exception {
    private static final long serialVersionUID = 1L;

    NotOwned(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Runs the handler and commits its work with the job's success.
   *
   * @param purge the worker keeps no succeeded job: the row is deleted instead of marked succeeded
   * @throws NotOwned if the attempt lost the job first (rolled back)
   * @throws Exception what the handler threw, or a database failure (rolled back where it could be)
   */
  static <T> void run(DataSource dataSource, JobSql sql, boolean purge, int networkTimeoutMillis, RunningJob job,
      T payload, TransactionalJobHandler<T> handler) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      int timeout = c.getNetworkTimeout();
      c.setAutoCommit(false);
      try {
        handler.handle(payload, job, c);
        c.setNetworkTimeout(Runnable::run, networkTimeoutMillis); // the handler's own statements are its own
        if (!succeed(c, purge ? sql.purgeInTransaction : sql.succeedInTransaction, job)) {
          c.rollback();
          throw new NotOwned(job + " was no longer this attempt's when its transaction came to commit: rolled back");
        }
        c.commit();
      } catch (Throwable t) {
        rollbackQuietly(c, t);
        throw t;
      } finally {
        restore(c, autoCommit, timeout);
      }
    }
  }

  /** Writes the job's success (or, when the worker keeps no succeeded job, deletes its row). */
  private static boolean succeed(Connection c, String statement, RunningJob job) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(StatementClaims.DURABLE + statement)) {
      ps.setLong(1, job.id());
      ps.setInt(2, job.attempt());
      ps.setLong(3, job.owner());
      ps.execute(); // the durable setting's row, then the update's count
      if (ps.getMoreResults()) {
        throw new SQLException("the job's success returned rows");
      }
      return ps.getUpdateCount() == 1;
    }
  }

  /**
   * Puts the connection back as it came, for a pool; on a broken connection that fails, and the
   * failure that broke it is the one reported (the pool discards such a connection).
   */
  private static void restore(Connection c, boolean autoCommit, int timeout) {
    try {
      c.setNetworkTimeout(Runnable::run, timeout);
      c.setAutoCommit(autoCommit);
    } catch (SQLException e) {
      // broken: closing it is all that is left
    }
  }

  private static void rollbackQuietly(Connection c, Throwable failure) {
    try {
      if (!c.isClosed()) {
        c.rollback();
      }
    } catch (SQLException e) {
      failure.addSuppressed(e);
    }
  }
}
