package io.pglock.queue;

/** How a worker takes ownership of the jobs it runs. The API is the same in both. */
public enum ClaimMode {
  /**
   * The default. Jobs are selected with {@code FOR UPDATE SKIP LOCKED} and owned through a session
   * advisory lock held on the worker's own connection while they run: when the worker dies or its
   * connection drops, the server frees the locks and any worker takes the jobs back at once. Needs
   * a direct connection (or a session-mode pool), not a transaction-mode pooler.
   */
  ADVISORY,
  /**
   * For transaction-mode poolers (PgBouncer): jobs are selected with {@code FOR UPDATE SKIP LOCKED}
   * and owned through a lease ({@code lease_until}) that the worker renews by heartbeats; every
   * statement stands alone, so any pooled backend can run it. A crashed worker's jobs come back when
   * their lease runs out, not at once; LISTEN is off (polling only) unless asked for.
   */
  LEASE
}
