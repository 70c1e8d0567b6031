package io.pglock.queue;

import java.sql.Connection;

/**
 * A handler whose work is writes to the queue's own database, made <b>exactly once</b>: it gets a
 * connection in an open transaction, and the worker records the job as succeeded in that same
 * transaction and commits it. The handler's writes and the job's success commit together or not at
 * all, so a worker that dies mid-job leaves neither, and the next attempt starts from a clean slate.
 *
 * <p>Before the commit the worker checks, in the transaction, that this attempt still owns the job
 * (the row is still running at this attempt, under this worker's claim) and holds the job's row until
 * the commit: an attempt that lost the job (its worker's connection dropped, its lease ran out, and
 * another worker took the job over) commits nothing, and a newer attempt cannot take the job while
 * this one commits. The commit is durable ({@code synchronous_commit} raised to {@code on} for it)
 * whatever the session's setting.
 *
 * <p>Do not commit, roll back or change the connection's auto-commit: the worker does. Throwing
 * rolls the transaction back, and the attempt fails as with {@link JobHandler} (retried after its
 * backoff, {@link DiscardJobException} to discard). Effects outside this database (an e-mail, an
 * HTTP call) are not covered: they can still happen on an attempt that then fails to commit.
 *
 * <pre>{@code
 * JobWorker worker = jobs.worker("billing")
 *     .handlerInTransaction("charge", Charge.class, (charge, job, tx) -> {
 *       try (PreparedStatement ps = tx.prepareStatement("UPDATE account SET balance = balance - ? WHERE id = ?")) {
 *         ps.setLong(1, charge.cents());
 *         ps.setLong(2, charge.account());
 *         ps.executeUpdate();
 *       }
 *     })
 *     .start();
 * }</pre>
 *
 * @param <T> the payload's type
 */
@FunctionalInterface
public interface TransactionalJobHandler<T> {
  /**
   * Runs one attempt in the transaction that records its success.
   *
   * @param payload the job's payload, read by the queue's {@link JsonMapper}
   * @param job the attempt: id, attempt number, and whether to stop
   * @param transaction a connection from the queue's data source, auto-commit off; the worker commits
   *     it with the job's success, or rolls it back
   * @throws Exception on failure: the transaction is rolled back
   */
  void handle(T payload, JobContext job, Connection transaction) throws Exception;
}
