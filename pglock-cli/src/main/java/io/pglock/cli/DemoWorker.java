package io.pglock.cli;

import io.pglock.PgLocks;
import io.pglock.WorkDistributor;
import io.pglock.WorkDistributor.WorkReport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One worker of the demo fleet, standing in for a separate process: it has its own {@link PgLocks}
 * (its own lock session and node name) and walks the shared resources through a
 * {@link WorkDistributor}. Under each resource's lock it checks whether the resource was already
 * processed this round (the usual "lock, check status, work, mark done" idiom) and, if not, runs a
 * simulated task of 20 to 80 ms.
 *
 * <p>One thread walks a worker at a time; the counters may be read from any thread.
 */
final class DemoWorker implements AutoCloseable {
  private final String name;
  private final PgLocks locks;
  private final WorkDistributor distributor;
  private final ResourceLedger ledger;
  private final Console console;
  private final AtomicInteger processed = new AtomicInteger();
  private final AtomicInteger skipped = new AtomicInteger();
  private final AtomicInteger alreadyDone = new AtomicInteger();

  DemoWorker(String name, PgLocks locks, ResourceLedger ledger, Console console) {
    this.name = name;
    this.locks = locks;
    this.distributor = WorkDistributor.of(locks);
    this.ledger = ledger;
    this.console = console;
  }

  String name() {
    return name;
  }

  PgLocks locks() {
    return locks;
  }

  /** Resources this worker processed, over all rounds. */
  int processed() {
    return processed.get();
  }

  /** Resources this worker skipped because another worker held their lock, over all rounds. */
  int skipped() {
    return skipped.get();
  }

  /** Resources whose lock this worker got after another had processed them this round. */
  int alreadyDone() {
    return alreadyDone.get();
  }

  /**
   * Walks every resource once and prints what it skipped.
   *
   * @throws InterruptedException if interrupted during a task (the walk stops)
   * @throws IllegalStateException if a task failed, which the demo's tasks never do
   */
  void walk(int round) throws InterruptedException {
    int processedBefore = processed.get();
    int doneBefore = alreadyDone.get();
    WorkReport<String> report = distributor.run(ledger.resources(), r -> r, this::work);
    skipped.addAndGet(report.skipped().size());
    if (Thread.currentThread().isInterrupted()) {
      throw new InterruptedException(name + " was interrupted in round " + round);
    }
    if (!report.failed().isEmpty()) {
      Map.Entry<String, RuntimeException> first = report.failed().entrySet().iterator().next();
      throw new IllegalStateException(name + " failed on " + first.getKey(), first.getValue());
    }
    List<String> busy = report.skipped();
    console.event(name + " finished round " + round + ": processed " + (processed.get() - processedBefore)
        + ", found " + (alreadyDone.get() - doneBefore) + " already done, "
        + (busy.isEmpty() ? "skipped none" : "skipped " + String.join(", ", busy) + " (held by another worker)"));
  }

  private void work(String resource) {
    ledger.enter(resource);
    try {
      if (ledger.doneThisRound(resource)) {
        alreadyDone.incrementAndGet();
        return;
      }
      console.event(name + " took " + resource);
      simulateTask();
      ledger.processed(resource);
      processed.incrementAndGet();
      console.event(name + " released " + resource);
    } finally {
      ledger.exit(resource);
    }
  }

  private static void simulateTask() {
    try {
      Thread.sleep(ThreadLocalRandom.current().nextLong(20, 81)); // the simulated workload itself
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // walk() turns it back into an InterruptedException
      throw new java.util.concurrent.CancellationException("interrupted");
    }
  }

  /** Closes this worker's {@link PgLocks}, releasing anything still held. */
  @Override
  public void close() {
    locks.close();
  }
}
