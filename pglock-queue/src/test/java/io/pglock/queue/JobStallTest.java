package io.pglock.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.testing.Await;
import io.pglock.testing.PrivateServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A worker whose round trip hangs (its backend frozen with SIGSTOP, on a server of the test's own)
 * tells its running handlers that they lost their jobs within its lease, although its I/O thread
 * is stuck: the server could free the locks after the lease, and another worker take the jobs.
 */
class JobStallTest {
  private static final Duration LEASE = Duration.ofSeconds(3);

  @Test
  void aStuckRoundTrip_handlersAreToldWithinTheLease() throws Exception {
    PrivateServer server;
    try {
      server = PrivateServer.start();
    } catch (PrivateServer.Unavailable e) {
      assumeTrue(false, "no private PostgreSQL server here: " + e.getMessage());
      return;
    }
    Integer frozen = null;
    try (server) {
      DataSource ds = server.dataSource("pglock-stall-test");
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
      CountDownLatch started = new CountDownLatch(1);
      AtomicLong toldAt = new AtomicLong();
      try (PgLocks locks = PgLocks.builder(ds).namespace("stall").nodeName("staller").lease(LEASE).build();
          JobQueue jobs = JobQueue.builder(locks).build()) {
        JobWorker worker = jobs.worker("stall").pollInterval(Duration.ofMillis(100)).shutdownTimeout(Duration.ZERO)
            .handler("work", Object.class, (p, job) -> {
              started.countDown();
              while (job.isOwned()) {
                Thread.onSpinWait();
              }
              toldAt.set(System.nanoTime());
            }).start();
        jobs.enqueue(JobRequest.of("work", null).queue("stall"));
        assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
        frozen = workerPid(ds);
        long stopped = System.nanoTime();
        signal("STOP", frozen);
        Await.until("the handler was told", LEASE.plusSeconds(10), () -> toldAt.get() != 0);
        long ms = TimeUnit.NANOSECONDS.toMillis(toldAt.get() - stopped);
        System.out.println("handler told " + ms + " ms after its worker's backend froze (lease " + LEASE + ")");
        assertThat(ms).as("told within the lease, before the server could free the lock").isLessThan(LEASE.toMillis());
        signal("CONT", frozen);
        frozen = null;
        worker.close();
      }
    } finally {
      if (frozen != null) {
        signal("CONT", frozen);
      }
    }
  }

  private static int workerPid(DataSource ds) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'pglock:staller:jobs:%'");
        ResultSet rs = ps.executeQuery()) {
      assertThat(rs.next()).as("the worker's session").isTrue();
      return rs.getInt(1);
    }
  }

  private static void signal(String signal, int pid) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, Integer.toString(pid)).inheritIO().start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0).as("kill -" + signal).isTrue();
  }
}
