package io.pglock.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pglock.LockMode;
import io.pglock.PgLocksListener.AcquireKind;
import io.pglock.PgLocksListener.AcquireOutcome;
import io.pglock.micrometer.JobMetrics;
import io.pglock.micrometer.PgLocksMetrics;
import io.pglock.queue.JobContext;
import io.pglock.queue.JobListener.AttemptResult;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * B13's figure without a database: what one call of each hook costs by itself, on one thread, in ns.
 * A figure that the noise of a shared machine does not blur, against the microseconds of a cycle.
 */
final class ListenerCost {
  private ListenerCost() {}

  /** How long each hook is called for, once to warm up and once measured. */
  private static final long WINDOW_NANOS = 300_000_000L;
  private static final int BATCH = 1_000;

  @FunctionalInterface
  private interface Call {
    void run(long i);
  }

  static String measure() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    PgLocksMetrics locks = new PgLocksMetrics(registry);
    JobMetrics jobs = new JobMetrics(registry);
    try (Observability obs = new Observability()) {
      AtomicReference<Map<String, String>> carried = new AtomicReference<>();
      obs.enqueue(() -> carried.set(obs.tracing.capture()));
      JobContext job = new Job("b13-queue", "b13-noop");
      double acquire = nanosPerCall(i -> {
        long t0 = System.nanoTime();
        locks.acquireEnded("b13", LockMode.EXCLUSIVE, AcquireKind.TRY, AcquireOutcome.ACQUIRED, System.nanoTime() - t0);
      });
      double attempt = nanosPerCall(i -> jobs.attemptEnded("b13-queue", "b13-noop", AttemptResult.SUCCEEDED, i));
      double span = nanosPerCall(i -> obs.tracing.startAttempt(job, carried.get()).end(AttemptResult.SUCCEEDED, null),
          obs::flush);
      return Report.fmt("PgLocksMetrics.acquireEnded with its two nanoTime() %.0f ns, JobMetrics.attemptEnded %.0f"
          + " ns, OpenTelemetryJobTracing startAttempt+end (carried traceparent, SDK always-on, batch processor; "
          + "flushed untimed every %d spans, below its queue of 2048, so that none is dropped) %.0f ns per call "
          + "(1 thread, %.1f s each after as long a warm-up)", acquire, attempt, BATCH, span, WINDOW_NANOS / 1e9);
    } finally {
      registry.close();
    }
  }

  private static double nanosPerCall(Call call) {
    return nanosPerCall(call, () -> {});
  }

  /** Calls in batches of {@value #BATCH}, {@code between} (untimed) after each. */
  private static double nanosPerCall(Call call, Runnable between) {
    run(call, between);
    return run(call, between);
  }

  private static double run(Call call, Runnable between) {
    long timed = 0;
    long n = 0;
    while (timed < WINDOW_NANOS) {
      long t0 = System.nanoTime();
      for (int k = 0; k < BATCH; k++) {
        call.run(n++);
      }
      timed += System.nanoTime() - t0;
      between.run();
    }
    return (double) timed / n;
  }

  private record Job(String queue, String kind) implements JobContext {
    @Override
    public long id() {
      return 1;
    }

    @Override
    public int attempt() {
      return 1;
    }

    @Override
    public int maxAttempts() {
      return 25;
    }

    @Override
    public String payloadJson() {
      return "1";
    }

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public boolean isOwned() {
      return true;
    }
  }
}
