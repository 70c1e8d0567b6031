package io.pglock.queue.internal;

import io.pglock.queue.JobWorker;
import java.time.Duration;
import java.util.List;

/**
 * A {@link JobWorker} on more than one session ({@code JobWorkerBuilder.sessions}): one
 * {@link DefaultJobWorker} per session, each with its share of the handler threads, seen as one.
 * Closing stops every session's claims at once, then waits for each within the one deadline.
 */
final class SessionsWorker implements JobWorker {
  private final String queue;
  private final List<DefaultJobWorker> sessions;
  private final Duration shutdownTimeout;

  SessionsWorker(String queue, List<DefaultJobWorker> sessions, Duration shutdownTimeout) {
    this.queue = queue;
    this.sessions = List.copyOf(sessions);
    this.shutdownTimeout = shutdownTimeout;
  }

  @Override
  public String queue() {
    return queue;
  }

  @Override
  public int running() {
    return sessions.stream().mapToInt(DefaultJobWorker::running).sum();
  }

  @Override
  public long finished() {
    return sessions.stream().mapToLong(DefaultJobWorker::finished).sum();
  }

  @Override
  public void close() {
    close(shutdownTimeout);
  }

  @Override
  public boolean close(Duration timeout) {
    sessions.forEach(DefaultJobWorker::beginClose); // none claims while another drains
    long deadline = System.nanoTime() + timeout.toNanos();
    boolean all = true;
    for (DefaultJobWorker w : sessions) {
      all &= w.close(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }
    return all;
  }

  @Override
  public String toString() {
    return "JobWorker[" + queue + ", " + sessions.size() + " sessions]";
  }
}
