package io.pglock.cli;

import io.pglock.PgLocks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * The demo's fleet: builds one {@link PgLocks} per worker (as separate processes would), then runs
 * the rounds. In each round every worker walks the shared resources once, all starting together;
 * the next round starts when every worker has finished and every lock it released has left the
 * server (pglock releases asynchronously), so that no round sees locks from the one before. After
 * each round it prints one line per worker with what its walk came to (see {@link DemoWorker}).
 *
 * <p>Not thread-safe: one thread runs the fleet.
 */
final class DemoFleet implements AutoCloseable {
  /** How long released locks may take to leave the server between rounds (normally a millisecond). */
  private static final Duration RELEASE_GRACE = Duration.ofSeconds(5);

  private final List<DemoWorker> workers = new ArrayList<>();
  private final ResourceLedger ledger;
  private final Console console;
  private final ExecutorService threads;

  private final boolean verbose;

  DemoFleet(DataSource dataSource, String namespace, Duration connectTimeout, int workerCount, ResourceLedger ledger,
      Console console, boolean verbose) {
    this.ledger = ledger;
    this.console = console;
    this.verbose = verbose;
    AtomicInteger n = new AtomicInteger();
    this.threads = Executors.newFixedThreadPool(workerCount, r -> {
      Thread t = new Thread(r, "pglock-demo-worker-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    try {
      for (int i = 1; i <= workerCount; i++) {
        String name = "worker-" + i;
        PgLocks locks = PgLocks.builder(dataSource).namespace(namespace).nodeName(name)
            .connectTimeout(connectTimeout).build();
        workers.add(new DemoWorker(name, locks, ledger, console, verbose));
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  List<DemoWorker> workers() {
    return workers;
  }

  /**
   * Runs the rounds.
   *
   * @throws InterruptedException if interrupted (the workers are interrupted too)
   */
  void run(int rounds) throws InterruptedException {
    printLegend();
    for (int round = 1; round <= rounds; round++) {
      console.plain("");
      if (verbose) {
        console.event("round " + round + " of " + rounds + ": " + DemoCommand.count(workers.size(), "worker")
            + " walk " + DemoCommand.count(ledger.resources().size(), "resource"));
      }
      ledger.startRound();
      List<DemoWorker.Walk> walks = runRound(round);
      awaitReleased();
      List<String> missed = ledger.missedThisRound();
      console.event("round " + round + " of " + rounds + " done: " + (ledger.resources().size() - missed.size())
          + "/" + ledger.resources().size() + " resources processed"
          + (missed.isEmpty() ? "" : "; missed " + String.join(", ", missed)));
      for (int i = 0; i < workers.size(); i++) {
        DemoWorker.Walk walk = walks.get(i);
        console.plain(tally(workers.get(i).name(), walk.processed(), walk.alreadyDone(), walk.busy().size()));
      }
    }
  }

  /** One worker's line in a round or in the summary; the words are the ones the legend explains. */
  static String tally(String worker, int processed, int alreadyDone, int busy) {
    return String.format("  %-10s processed %3d   already done %3d   busy %3d", worker, processed, alreadyDone, busy);
  }

  /** Says once what the numbers after each round mean, so that nobody has to read the code. */
  private void printLegend() {
    console.plain("");
    console.plain("In each round every worker walks all " + DemoCommand.count(ledger.resources().size(), "resource")
        + ", try-locking each one (never waiting). Per worker and round:");
    console.plain("  processed     it got the lock and did the work");
    console.plain("  already done  it got the lock, but another worker had already processed that resource "
        + "in this round: nothing left to do");
    console.plain("  busy          another worker held the lock at that moment, so it skipped the resource");
  }

  private List<DemoWorker.Walk> runRound(int round) throws InterruptedException {
    CountDownLatch start = new CountDownLatch(1);
    List<Future<DemoWorker.Walk>> walks = new ArrayList<>();
    for (DemoWorker w : workers) {
      walks.add(threads.submit(() -> {
        start.await();
        return w.walk(round);
      }));
    }
    start.countDown();
    try {
      List<DemoWorker.Walk> done = new ArrayList<>();
      for (Future<DemoWorker.Walk> walk : walks) {
        done.add(walk.get());
      }
      return done;
    } catch (ExecutionException e) {
      walks.forEach(f -> f.cancel(true));
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException("a worker failed: " + cause, cause);
    } catch (InterruptedException e) {
      walks.forEach(f -> f.cancel(true));
      throw e;
    }
  }

  /** Waits until no worker holds a server lock: their last releases have been answered. */
  private void awaitReleased() throws InterruptedException {
    long deadline = System.nanoTime() + RELEASE_GRACE.toNanos();
    while (workers.stream().anyMatch(w -> w.locks().heldLocks() > 0)) {
      if (System.nanoTime() - deadline >= 0) {
        console.event("warning: locks still held " + RELEASE_GRACE.toSeconds() + " s after the round ended");
        return;
      }
      Thread.sleep(1); // poll interval of a condition wait; releases normally land within a millisecond
    }
  }

  /** Stops the worker threads and closes every worker's {@link PgLocks}. */
  @Override
  public void close() {
    threads.shutdownNow();
    for (DemoWorker w : workers) {
      w.close();
    }
  }
}
