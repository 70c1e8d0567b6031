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
      double span = nanosPerCall(i -> obs.tracing.startAttempt(job, carried.get()).end(AttemptResult.SUCCEEDED, null));
      return Report.fmt("PgLocksMetrics.acquireEnded with its two nanoTime() %.0f ns, JobMetrics.attemptEnded %.0f"
          + " ns, OpenTelemetryJobTracing startAttempt+end (carried traceparent, SDK always-on, batch processor) %.0f"
          + " ns per call (1 thread, %.1f s each after as long a warm-up)", acquire, attempt, span, WINDOW_NANOS / 1e9);
    } finally {
      registry.close();
    }
  }

  private static double nanosPerCall(Call call) {
    run(call);
    return run(call);
  }

  private static double run(Call call) {
    long start = System.nanoTime();
    long n = 0;
    long now;
    do {
      for (int k = 0; k < 1_000; k++) {
        call.run(n++);
      }
      now = System.nanoTime();
    } while (now - start < WINDOW_NANOS);
    return (double) (now - start) / n;
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
