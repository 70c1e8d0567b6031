package io.pglock.spring.queue;

import io.pglock.queue.ClaimMode;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobWorker;
import io.pglock.queue.JobWorkerBuilder;
import io.pglock.spring.boot.ConnectionBudget;
import io.pglock.spring.boot.PgLockPhases;
import io.pglock.spring.boot.PgLockProperties;
import io.pglock.spring.health.HealthDetails;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

/**
 * Starts a worker for each queue that has {@link PgJobHandler} methods when the context starts,
 * and closes them when it stops: each finishes its running jobs within its shutdown timeout and
 * gives back the rest, before the scheduler and {@link io.pglock.PgLocks} close.
 */
public final class JobWorkersLifecycle implements SmartLifecycle, ConnectionBudget, HealthDetails {
  private final JobQueue jobs;
  private final JobHandlerProcessor handlers;
  private final PgLockProperties.Queue settings;
  private final ObjectProvider<JobWorkerBuilderCustomizer> customizers;
  private final List<JobWorker> workers = new ArrayList<>();
  private volatile boolean running;

  /**
   * Creates the lifecycle.
   *
   * @param jobs the queue the workers claim from
   * @param handlers the annotated handlers found
   * @param settings {@code pglock.queue.*}
   * @param customizers applied to each worker's builder after the properties
   */
  public JobWorkersLifecycle(JobQueue jobs, JobHandlerProcessor handlers, PgLockProperties.Queue settings,
      ObjectProvider<JobWorkerBuilderCustomizer> customizers) {
    this.jobs = jobs;
    this.handlers = handlers;
    this.settings = settings;
    this.customizers = customizers;
  }

  @Override
  public synchronized void start() {
    try {
      for (Map.Entry<String, List<JobHandlerProcessor.Registration>> e : handlers.handlers().entrySet()) {
        if (!enabled(e.getKey())) {
          continue;
        }
        JobWorkerBuilder b = jobs.worker(e.getKey());
        apply(b, e.getKey());
        for (JobHandlerProcessor.Registration r : e.getValue()) {
          register(b, r);
          if (r.maxAttempts() > 0) {
            b.maxAttempts(r.kind(), r.maxAttempts());
          }
        }
        String queue = e.getKey();
        customizers.orderedStream().forEach(c -> c.customize(queue, b));
        workers.add(b.start());
      }
    } catch (RuntimeException e) {
      closeAll();
      throw e;
    }
    running = true;
  }

  @SuppressWarnings("unchecked")
  private static void register(JobWorkerBuilder b, JobHandlerProcessor.Registration r) {
    if (r.inTransaction() != null) {
      b.handlerInTransaction(r.kind(), (Class<Object>) r.payloadType(), r.inTransaction());
    } else {
      b.handler(r.kind(), (Class<Object>) r.payloadType(), r.handler());
    }
  }

  private boolean enabled(String queue) {
    Boolean own = setting(queue, PgLockProperties.Worker::getEnabled);
    return own == null || own;
  }

  private <T> T setting(String queue, Function<PgLockProperties.Worker, T> get) {
    PgLockProperties.Worker own = settings.getQueues().get(queue);
    T value = own == null ? null : get.apply(own);
    return value != null ? value : get.apply(settings.getWorker());
  }

  private void apply(JobWorkerBuilder b, String queue) {
    Integer concurrency = setting(queue, PgLockProperties.Worker::getConcurrency);
    if (concurrency != null) {
      b.concurrency(concurrency);
    }
    Integer sessions = setting(queue, PgLockProperties.Worker::getSessions);
    if (sessions != null) {
      b.sessions(sessions);
    }
    String mode = setting(queue, PgLockProperties.Worker::getClaimMode);
    if (mode != null) {
      b.claimMode(claimMode(queue, mode));
    }
    var lease = setting(queue, PgLockProperties.Worker::getLease);
    if (lease != null) {
      b.lease(lease);
    }
    Boolean listen = setting(queue, PgLockProperties.Worker::getListen);
    if (listen != null) {
      b.listen(listen);
    }
    var poll = setting(queue, PgLockProperties.Worker::getPollInterval);
    if (poll != null) {
      b.pollInterval(poll);
    }
    Integer attempts = setting(queue, PgLockProperties.Worker::getMaxAttempts);
    if (attempts != null) {
      b.maxAttempts(attempts);
    }
    var shutdown = setting(queue, PgLockProperties.Worker::getShutdownTimeout);
    if (shutdown != null) {
      b.shutdownTimeout(shutdown);
    }
    var retention = setting(queue, PgLockProperties.Worker::getRetention);
    if (retention != null) {
      b.retention(retention);
    }
    var discarded = setting(queue, PgLockProperties.Worker::getDiscardedRetention);
    if (discarded != null) {
      b.discardedRetention(discarded);
    }
  }

  private static ClaimMode claimMode(String queue, String text) {
    try {
      return ClaimMode.valueOf(text.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("pglock.queue claim-mode \"" + text + "\" for queue \"" + queue
          + "\" is not one of advisory, lease", e);
    }
  }

  @Override
  public void stop() {
    closeAll();
  }

  @Override
  public void stop(Runnable callback) {
    running = false;
    Thread t = new Thread(() -> {
      try {
        closeAll();
      } finally {
        callback.run();
      }
    }, "pglock-workers-stop");
    t.setDaemon(true);
    t.start();
  }

  private void closeAll() {
    running = false;
    List<JobWorker> toClose;
    synchronized (this) {
      toClose = new ArrayList<>(workers);
      workers.clear();
    }
    // every worker stops claiming at once; each then waits for its own running jobs
    List<Thread> closers = new ArrayList<>();
    for (JobWorker w : toClose) {
      Thread t = new Thread(w::close, "pglock-worker-stop-" + w.queue());
      t.setDaemon(true);
      t.start();
      closers.add(t);
    }
    for (Thread t : closers) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return PgLockPhases.WORKERS;
  }

  /** {@return the running workers} */
  public synchronized List<JobWorker> workers() {
    return List.copyOf(workers);
  }

  @Override
  public void addHealthDetails(Map<String, Object> details) {
    Map<String, Object> running = new java.util.LinkedHashMap<>();
    for (JobWorker w : workers()) {
      running.put(w.queue(), Map.of("runningJobs", w.running(), "finishedJobs", w.finished()));
    }
    if (!running.isEmpty()) {
      details.put("workers", running);
    }
  }

  @Override
  public int connectionsHeld() {
    int queues = (int) handlers.handlers().keySet().stream().filter(this::enabled).count();
    return queues == 0 ? 0 : queues + 1;
  }

  @Override
  public String describeConnections() {
    int n = connectionsHeld() - 1;
    return n + " queue worker session(s) and 1 LISTEN connection";
  }
}
