package io.pglock.queue;

import io.pglock.PgLocks;
import java.time.Duration;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A worker JVM for {@link JobOwnershipPauseTest}: runs one job of kind {@code hold} whose handler asks
 * {@link JobContext#isOwned()} in a tight loop. It prints {@code STARTED <attempt>} when the handler
 * starts, and {@code TOLD <attempt> <lastOwnedMillis> <toldMillis>} (wall clock) when isOwned first
 * says false: the last moment the handler believed it owned the job.
 *
 * <p>Arguments: JDBC URL, node name, queue, lease in milliseconds, user.
 */
public final class PausedHandlerProcess {
  private PausedHandlerProcess() {}

  public static void main(String[] args) throws Exception {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(args[0]);
    ds.setUser(args.length > 4 && !"null".equals(args[4]) ? args[4] : "postgres");
    ds.setConnectTimeout(30);
    PgLocks locks = PgLocks.builder(ds).namespace("pause").nodeName(args[1])
        .connectTimeout(Duration.ofSeconds(30)).lease(Duration.ofMillis(Long.parseLong(args[3]))).build();
    JobQueue jobs = JobQueue.builder(locks).build();
    jobs.worker(args[2]).pollInterval(Duration.ofMillis(100)).shutdownTimeout(Duration.ZERO)
        .handler("hold", Object.class, (p, job) -> {
          System.out.println("STARTED " + job.attempt());
          System.out.flush();
          long lastOwned = System.currentTimeMillis();
          while (true) {
            long asked = System.currentTimeMillis(); // read before asking: a pause may fall after the answer
            if (!job.isOwned()) {
              break;
            }
            lastOwned = asked;
          }
          System.out.println("TOLD " + job.attempt() + " " + lastOwned + " " + System.currentTimeMillis());
          System.out.flush();
        }).start();
    System.out.println("READY");
    System.out.flush();
    Thread.currentThread().join(); // until killed
  }
}
