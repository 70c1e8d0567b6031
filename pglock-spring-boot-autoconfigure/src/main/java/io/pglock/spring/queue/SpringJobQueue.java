package io.pglock.spring.queue;

import io.pglock.queue.Enqueued;
import io.pglock.queue.JobAdmin;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobRequest;
import io.pglock.queue.JobWorkerBuilder;
import java.sql.Connection;
import java.util.List;
import java.util.function.Function;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The starter's {@link JobQueue}: an enqueue inside a Spring-managed transaction on the
 * application's DataSource ({@code @Transactional}, a {@code TransactionTemplate}) goes in that
 * transaction, on its connection: the job exists if and only if the transaction commits, and
 * workers are woken at the commit. Outside a transaction it commits on its own, as
 * {@link JobQueue#enqueue(JobRequest)} does.
 */
public final class SpringJobQueue implements JobQueue {
  private final JobQueue delegate;
  private final DataSource dataSource;

  /**
   * Wraps a queue.
   *
   * @param delegate the queue
   * @param dataSource the DataSource whose Spring transactions an enqueue joins (the one the
   *     transaction manager uses)
   */
  public SpringJobQueue(JobQueue delegate, DataSource dataSource) {
    this.delegate = delegate;
    this.dataSource = dataSource;
  }

  @Override
  public Enqueued enqueue(JobRequest request) {
    return inTransaction(c -> delegate.enqueue(c, request), () -> delegate.enqueue(request));
  }

  @Override
  public Enqueued enqueue(Connection connection, JobRequest request) {
    return delegate.enqueue(connection, request);
  }

  @Override
  public List<Enqueued> enqueueAll(List<JobRequest> requests) {
    return inTransaction(c -> delegate.enqueueAll(c, requests), () -> delegate.enqueueAll(requests));
  }

  @Override
  public List<Enqueued> enqueueAll(Connection connection, List<JobRequest> requests) {
    return delegate.enqueueAll(connection, requests);
  }

  private <T> T inTransaction(Function<Connection, T> joined, java.util.function.Supplier<T> alone) {
    if (!TransactionSynchronizationManager.isActualTransactionActive()
        || TransactionSynchronizationManager.getResource(dataSource) == null) {
      return alone.get();
    }
    Connection c = DataSourceUtils.getConnection(dataSource);
    try {
      return joined.apply(c);
    } finally {
      DataSourceUtils.releaseConnection(c, dataSource);
    }
  }

  @Override
  public JobWorkerBuilder worker(String queue) {
    return delegate.worker(queue);
  }

  @Override
  public JobAdmin admin() {
    return delegate.admin();
  }

  @Override
  public void close() {
    delegate.close();
  }

  /** {@return the wrapped queue} */
  public JobQueue delegate() {
    return delegate;
  }
}
