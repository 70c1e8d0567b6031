package io.pglock.bench;

import io.pglock.PgLocks;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobWorker;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * One of B17's worker JVMs ({@link B17QueueScale}): a {@link JobQueue} on a {@link PgLocks}
 * (unpooled {@code PGSimpleDataSource}) on the benchmark's schema, and on command a worker with
 * {@code concurrency} handler threads (the rest at its defaults: advisory mode, one session, succeeded
 * jobs kept a day, pruning every minute) whose handler of kind {@value #KIND} does nothing.
 *
 * <p>Commands on stdin: {@code RUN <queue> [retention seconds]} starts a worker on that queue and prints
 * {@code RUNNING}; {@code STOP} closes it and prints {@code STOPPED <jobs it finished>};
 * {@code LEAVE} (or stdin closed) exits. Prints {@code READY} once its {@code JobQueue} is built,
 * {@code ERROR <text>} on a failure.
 *
 * <p>Arguments: {@code key=value}: {@code url}, {@code user}, {@code node}, {@code schema},
 * {@code concurrency}. A password comes in the environment variable {@code PGLOCK_BENCH_PASSWORD}.
 */
public final class ScaleWorkerMain {
  static final String KIND = "b17-noop";
  static final String NAMESPACE = "b17";

  private ScaleWorkerMain() {}

  /**
   * Entry point of a B17 worker JVM.
   *
   * @param args {@code key=value} options
   */
  public static void main(String[] args) {
    Map<String, String> opts = ContenderMain.childOptions(args);
    int status = 0;
    int concurrency = Integer.parseInt(opts.get("concurrency"));
    try (PgLocks locks = PgLocks.builder(ChildDataSources.simple(opts)).schema(opts.get("schema"))
        .namespace(NAMESPACE).nodeName(opts.get("node")).connectTimeout(Duration.ofSeconds(10)).build();
        JobQueue jobs = JobQueue.builder(locks).build();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      ContenderMain.out("READY");
      JobWorker worker = null;
      for (String line; (line = in.readLine()) != null && !line.trim().equals("LEAVE"); ) {
        String[] w = line.trim().split(" ");
        if (w[0].equals("RUN") && worker == null) {
          var b = jobs.worker(w[1]).concurrency(concurrency).handler(KIND, Integer.class, (n, job) -> { });
          if (w.length > 2) {
            b.retention(Duration.ofSeconds(Long.parseLong(w[2])));
          }
          worker = b.start();
          ContenderMain.out("RUNNING");
        } else if (w[0].equals("STOP") && worker != null) {
          worker.close();
          ContenderMain.out("STOPPED " + worker.finished());
          worker = null;
        }
      }
      if (worker != null) {
        worker.close(Duration.ZERO);
      }
    } catch (Throwable t) {
      t.printStackTrace();
      ContenderMain.out("ERROR " + String.valueOf(t).replace('\n', ' '));
      status = 2;
    }
    System.exit(status);
  }
}
