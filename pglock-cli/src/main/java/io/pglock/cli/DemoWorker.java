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
 * {@link WorkDistributor}, which try-locks each one and never waits. For each resource the walk
 * ends one of three ways, counted separately:
 *
 * <ul>
 *   <li><b>processed</b>: it got the lock and ran the simulated task (20 to 80 ms);
 *   <li><b>already done</b>: it got the lock, but another worker had processed the resource
 *       earlier in this round, so there was nothing left to do (the usual "lock, check status,
 *       work, mark done" idiom: the lock excludes concurrent work, the check excludes repeated work);
 *   <li><b>busy</b>: another worker held the lock at that moment, so it skipped the resource.
 * </ul>
 *
 * <p>With {@code verbose} it prints a line per take and release; otherwise the fleet prints the
 * tally of each walk. One thread walks a worker at a time; the counters may be read from any thread.
 */
final class DemoWorker implements AutoCloseable {
  private final String name;
  private final PgLocks locks;
  private final WorkDistributor distributor;
  private final ResourceLedger ledger;
  private final Console console;
  private final boolean verbose;
  private final AtomicInteger processed = new AtomicInteger();
  private final AtomicInteger busy = new AtomicInteger();
  private final AtomicInteger alreadyDone = new AtomicInteger();

  DemoWorker(String name, PgLocks locks, ResourceLedger ledger, Console console, boolean verbose) {
    this.name = name;
    this.locks = locks;
    this.distributor = WorkDistributor.of(locks);
    this.ledger = ledger;
    this.console = console;
    this.verbose = verbose;
  }

  /** What one walk came to: the three outcomes of {@link DemoWorker}, counted. */
  record Walk(int processed, int alreadyDone, List<String> busy) {}

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
  int busy() {
    return busy.get();
  }

  /** Resources whose lock this worker got after another worker had processed them that round. */
  int alreadyDone() {
    return alreadyDone.get();
  }

  /**
   * Walks every resource once.
   *
   * @return what the walk came to
   * @throws InterruptedException if interrupted during a task (the walk stops)
   * @throws IllegalStateException if a task failed, which the demo's tasks never do
   */
  Walk walk(int round) throws InterruptedException {
    int processedBefore = processed.get();
    int doneBefore = alreadyDone.get();
    WorkReport<String> report = distributor.run(ledger.resources(), r -> r, this::work);
    busy.addAndGet(report.skipped().size());
    if (Thread.currentThread().isInterrupted()) {
      throw new InterruptedException(name + " was interrupted in round " + round);
    }
    if (!report.failed().isEmpty()) {
      Map.Entry<String, RuntimeException> first = report.failed().entrySet().iterator().next();
      throw new IllegalStateException(name + " failed on " + first.getKey(), first.getValue());
    }
    Walk walk = new Walk(processed.get() - processedBefore, alreadyDone.get() - doneBefore, report.skipped());
    if (verbose) {
      console.event(name + " finished round " + round + ": processed " + walk.processed() + ", "
          + walk.alreadyDone() + " already done by another worker, "
          + (walk.busy().isEmpty() ? "none busy" : "busy (held by another worker): " + String.join(", ", walk.busy())));
    }
    return walk;
  }

  private void work(String resource) {
    ledger.enter(resource);
    try {
      if (ledger.doneThisRound(resource)) {
        alreadyDone.incrementAndGet();
        if (verbose) {
          console.event(name + " took " + resource + ": already done by another worker this round, released");
        }
        return;
      }
      if (verbose) {
        console.event(name + " took " + resource);
      }
      simulateTask();
      ledger.processed(resource);
      processed.incrementAndGet();
      if (verbose) {
        console.event(name + " released " + resource);
      }
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
