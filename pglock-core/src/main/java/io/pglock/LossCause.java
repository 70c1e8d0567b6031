package io.pglock;

/** Why a held lock was lost before its handle was closed. */
public enum LossCause {
  /**
   * The lock session's connection failed: the backend was terminated ({@code pg_terminate_backend}),
   * the server restarted or crashed, or the network failed. The server has freed the lock.
   */
  CONNECTION_LOST,
  /**
   * No round trip succeeded within the lease: the server may free the lock (it ends idle sessions
   * after {@code idle_session_timeout}) from this moment on, so pglock no longer counts it as held
   * and closes the session.
   */
  LEASE_EXPIRED,
  /** The {@link PgLocks} that held the lock was closed while the handle was still open. */
  CLOSED
}
