package io.pglock;

/**
 * The connection reached a PostgreSQL server in recovery ({@code pg_is_in_recovery()}): a standby,
 * or a former primary on its way back as one. pglock refuses it because advisory locks are not
 * replicated: a lock taken on a standby excludes nobody who holds the same lock on the primary, and
 * the queue's and scheduler's decisions could not be written there anyway.
 *
 * <p>It is a {@link LockSessionException}, a connection-level failure that pglock's retrying parts
 * (leader election, ownership, workers, the scheduler) retry: during a failover a pool or a DNS
 * name may point at the wrong server for a moment. For good, point the {@link javax.sql.DataSource}
 * at the primary, with pgjdbc's multi-host URL and {@code targetServerType=primary}; see
 * {@code docs/failover.md}.
 */
public class ServerInRecoveryException extends LockSessionException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with the message given.
   *
   * @param message what went wrong and the fix
   */
  public ServerInRecoveryException(String message) {
    super(message, null);
  }
}
