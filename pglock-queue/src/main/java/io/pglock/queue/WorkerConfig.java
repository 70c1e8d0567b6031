package io.pglock.queue;

import java.time.Duration;
import java.util.Map;

/**
 * The settings of a {@link JobWorker}, as {@link JobWorkerBuilder} collected them.
 *
 * @param queue the queue worked
 * @param concurrency handler threads: the most jobs running at once
 * @param handlers handler and payload type per kind
 * @param maxAttempts attempts per kind for jobs that set none (kinds absent: {@code defaultMaxAttempts})
 * @param defaultMaxAttempts attempts for kinds without their own setting
 * @param backoff the wait before a retry
 * @param claimMode how jobs are owned
 * @param lease the lease of a running job in {@link ClaimMode#LEASE} mode
 * @param listen whether to wake on LISTEN/NOTIFY (else polling only)
 * @param pollInterval the safety-net poll when nothing wakes the worker
 * @param rescueInterval how often to look for running jobs whose worker is gone
 * @param concurrencyPerKey most running jobs per concurrency key across the fleet (0: no limit)
 * @param shutdownTimeout how long close() lets running jobs finish
 * @param retention how long succeeded and cancelled jobs are kept
 * @param discardedRetention how long discarded jobs are kept
 * @param sessions the database sessions the worker claims on, each with its share of the concurrency
 */
public record WorkerConfig(String queue, int concurrency, Map<String, Registration<?>> handlers,
    Map<String, Integer> maxAttempts, int defaultMaxAttempts, Backoff backoff, ClaimMode claimMode, Duration lease,
    boolean listen, Duration pollInterval, Duration rescueInterval, int concurrencyPerKey, Duration shutdownTimeout,
    Duration retention, Duration discardedRetention, int sessions) {

  /**
   * {@return the settings of one of the worker's sessions: session {@code i} of {@link #sessions}, its
   * share of the concurrency (the first {@code concurrency % sessions} get one more)}
   *
   * @param i the session, from 0
   */
  public WorkerConfig session(int i) {
    int share = concurrency / sessions + (i < concurrency % sessions ? 1 : 0);
    return new WorkerConfig(queue, share, handlers, maxAttempts, defaultMaxAttempts, backoff, claimMode, lease, listen,
        pollInterval, rescueInterval, concurrencyPerKey, shutdownTimeout, retention, discardedRetention, 1);
  }

  /**
   * A handler with its payload type: a plain {@link JobHandler}, or a
   * {@link TransactionalJobHandler} whose transaction also records the job's success (the other null).
   *
   * @param type the payload's class
   * @param handler the code, or null for a handler in a transaction
   * @param inTransaction the code run in the transaction that records its success, or null
   * @param <T> the payload's type
   */
  public record Registration<T>(Class<T> type, JobHandler<T> handler, TransactionalJobHandler<T> inTransaction) {
    /**
     * A registration with exactly one of the handlers.
     *
     * @param type the payload's class
     * @param handler the code, or null for a handler in a transaction
     * @param inTransaction the code run in the transaction that records its success, or null
     */
    public Registration {
      java.util.Objects.requireNonNull(type, "type");
      if ((handler == null) == (inTransaction == null)) {
        throw new IllegalArgumentException("a registration has one handler: a JobHandler or a TransactionalJobHandler");
      }
    }

    /**
     * A plain handler.
     *
     * @param type the payload's class
     * @param handler the code
     */
    public Registration(Class<T> type, JobHandler<T> handler) {
      this(type, java.util.Objects.requireNonNull(handler, "handler"), null);
    }
  }

  /**
   * {@return the attempts a job of the kind may have when it sets none}
   *
   * @param kind the kind's name
   */
  public int maxAttemptsOf(String kind) {
    return maxAttempts.getOrDefault(kind, defaultMaxAttempts);
  }
}
