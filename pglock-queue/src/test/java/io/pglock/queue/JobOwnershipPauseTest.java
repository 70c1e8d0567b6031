package io.pglock.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.testing.Await;
import io.pglock.testing.TestDatabase;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * "Do I still own it?" is never answered yes after the lease's deadline: a worker JVM paused
 * (SIGSTOP) past its lease while its handler asks {@link JobContext#isOwned()} in a loop, and whose
 * job another worker then runs, resumes with its handler reading false at once: the last time the
 * handler read true is before the other worker started the next attempt. (A flag cleared by a watch
 * thread fails this: on resume the handler reads the stale flag before the watch thread runs.)
 */
class JobOwnershipPauseTest {
  private static final Duration LEASE = Duration.ofSeconds(3);

  @Test
  void aHandlerPausedPastItsLease_readsNotOwnedBeforeTheNextAttemptCanStart() throws Exception {
    try (QueueFixture f = new QueueFixture()) {
      List<String> lines = new CopyOnWriteArrayList<>();
      Process child = start(TestDatabase.get().jdbcUrl(), "paused", f.queue, lines);
      try {
        Await.until("the child worker is ready", Duration.ofSeconds(60), () -> lines.contains("READY"));
        f.jobs("enqueuer").enqueue(f.job("hold", null));
        Await.until("the child's handler started", Duration.ofSeconds(60), () -> lines.contains("STARTED 1"));
        signal("STOP", child.pid());
        AtomicLong secondStarted = new AtomicLong();
        try {
          f.jobs("rescuer").worker(f.queue).pollInterval(Duration.ofMillis(100)).rescueInterval(Duration.ofMillis(100))
              .handler("hold", Object.class, (p, job) -> secondStarted.compareAndSet(0, System.currentTimeMillis()))
              .start();
          // the server ends the paused worker's idle session after its lease, and the rescue frees the job
          Await.until("another worker started the next attempt", LEASE.plusSeconds(60), () -> secondStarted.get() != 0);
        } finally {
          signal("CONT", child.pid());
        }
        Await.until("the paused handler was told", Duration.ofSeconds(60),
            () -> lines.stream().anyMatch(l -> l.startsWith("TOLD 1 ")));
        String told = lines.stream().filter(l -> l.startsWith("TOLD 1 ")).findFirst().orElseThrow();
        long lastOwned = Long.parseLong(told.split(" ")[2]);
        System.out.println("last isOwned() == true " + (secondStarted.get() - lastOwned)
            + " ms before the next attempt started");
        assertThat(lastOwned).as("the paused handler's last isOwned() == true (wall clock ms) against the next "
            + "attempt's start").isLessThan(secondStarted.get());
      } finally {
        child.destroyForcibly();
        child.waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  private static Process start(String url, String node, String queue, List<String> lines) throws Exception {
    String cp = System.getProperty("surefire.test.class.path");
    if (cp == null || cp.isBlank()) {
      cp = System.getProperty("java.class.path");
    }
    ProcessBuilder pb = new ProcessBuilder(System.getProperty("java.home") + File.separator + "bin" + File.separator
        + "java", "-Xmx128m", "-XX:+UseSerialGC", "-cp", cp, PausedHandlerProcess.class.getName(), url, node, queue,
        Long.toString(LEASE.toMillis()), String.valueOf(TestDatabase.get().user()));
    pb.redirectErrorStream(true);
    Process p = pb.start();
    Thread pump = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          lines.add(line);
        }
      } catch (java.io.IOException e) {
        // the process ended
      }
    }, "pump-" + node);
    pump.setDaemon(true);
    pump.start();
    return p;
  }

  private static void signal(String signal, long pid) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0).as("kill -" + signal).isTrue();
  }
}
