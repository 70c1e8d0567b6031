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
 * The worker that B11 kills ({@link B11QueueLatencies}), in a JVM of its own: a {@link JobQueue} on
 * a {@link PgLocks} (unpooled {@code PGSimpleDataSource}, {@code connectTimeout} 10 s as B9's nodes:
 * a cold JVM on a busy machine) and one worker on its queue, default settings (advisory mode) but
 * {@code concurrency(1)}, whose handler of kind {@value #KIND} prints
 * {@code STARTED <job id> <attempt> <System.nanoTime()>} and then blocks until its thread is
 * interrupted. Prints {@code READY <System.nanoTime()>} once the worker runs, {@code ERROR <text>}
 * for a failure; exits after {@code LEAVE} on stdin, or when stdin closes, so that it never outlives
 * the benchmark (the benchmark SIGKILLs it long before).
 *
 * <p>Arguments: {@code key=value}: {@code url}, {@code user}, {@code node}, {@code queue}. A
 * password comes in the environment variable {@code PGLOCK_BENCH_PASSWORD}.
 */
public final class QueueWorkerMain {
  static final String KIND = "b11-block";
  static final String NAMESPACE = "b11";
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

  private QueueWorkerMain() {}

  /**
   * Entry point of a B11 worker JVM.
   *
   * @param args {@code key=value} options
   */
  public static void main(String[] args) {
    Map<String, String> opts = ContenderMain.childOptions(args);
    int status = 0;
    try (PgLocks locks = PgLocks.builder(ChildDataSources.simple(opts)).namespace(NAMESPACE)
        .nodeName(opts.get("node")).connectTimeout(CONNECT_TIMEOUT).build();
        JobQueue jobs = JobQueue.builder(locks).build();
        JobWorker worker = jobs.worker(opts.get("queue")).concurrency(1)
            .handler(KIND, Integer.class, (payload, ctx) -> {
              ContenderMain.out("STARTED " + ctx.id() + " " + ctx.attempt() + " " + System.nanoTime());
              Thread.sleep(Long.MAX_VALUE); // blocks until interrupted (the worker closes, or lost the job)
            })
            .start()) {
      ContenderMain.out("READY " + System.nanoTime());
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null && !line.trim().equals("LEAVE")) {
          // no other command
        }
      }
      worker.close(Duration.ZERO);
    } catch (Throwable t) {
      t.printStackTrace();
      ContenderMain.out("ERROR " + String.valueOf(t).replace('\n', ' '));
      status = 2;
    }
    System.exit(status);
  }
}
