package io.pglock.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link JobTracing} on the real database: what an enqueue stores, what each attempt gets and ends. */
@ExtendWith(NoLeakedLocks.class)
class JobTracingTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private final QueueFixture f = new QueueFixture();

  @AfterEach
  void close() throws Exception {
    f.close();
  }

  /** One attempt as the tracing saw it: started with (job, carried), ended with (result, failure). */
  static final class Seen {
    final long id;
    final int attempt;
    final Map<String, String> carried;
    final String thread = Thread.currentThread().getName();
    final List<JobListener.AttemptResult> results = new CopyOnWriteArrayList<>();
    final List<Throwable> failures = new CopyOnWriteArrayList<>();
    volatile String endThread;

    Seen(JobContext job, Map<String, String> carried) {
      this.id = job.id();
      this.attempt = job.attempt();
      this.carried = carried;
    }
  }

  static final class Recording implements JobTracing {
    volatile Map<String, String> current;
    final List<Seen> seen = new CopyOnWriteArrayList<>();

    @Override
    public Map<String, String> capture() {
      return current;
    }

    @Override
    public Attempt startAttempt(JobContext job, Map<String, String> carried) {
      Seen s = new Seen(job, carried);
      seen.add(s);
      return (result, failure) -> {
        s.endThread = Thread.currentThread().getName();
        s.results.add(result);
        if (failure != null) {
          s.failures.add(failure);
        }
      };
    }

    List<Seen> of(long id) {
      return seen.stream().filter(s -> s.id == id).toList();
    }
  }

  private JobQueue jobs(JobTracing tracing) {
    return f.closeLater(JobQueue.builder(f.locks("n1")).tracing(tracing).build());
  }

  private JobWorkerBuilder worker(JobQueue jobs) {
    return jobs.worker(f.queue).pollInterval(Duration.ofMillis(200)).shutdownTimeout(Duration.ofSeconds(5))
        .backoff(attempt -> Duration.ofMillis(10));
  }

  /** The job's column trace_context as text (jsonb's own), or null. */
  private static String traceContext(long id) throws Exception {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT trace_context::text FROM pglock.job WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("job %d exists", id).isTrue();
        return rs.getString(1);
      }
    }
  }

  @Test
  void enqueueAll_storesTheCapturedContextWithEveryJob_andEachAttemptGetsItBack_andEndsOnce() throws Exception {
    Recording tracing = new Recording();
    JobQueue jobs = jobs(tracing);
    Map<String, String> context = new LinkedHashMap<>();
    context.put("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    context.put("odd \"key\"", "a\\b\nc\u0001é"); // escapes of every kind survive the round trip
    tracing.current = context;
    List<Enqueued> ids = jobs.enqueueAll(List.of(f.job("ok", null), f.job("flaky", null)));
    tracing.current = null;
    long ok = ids.get(0).id();
    long flaky = ids.get(1).id();
    for (long id : List.of(ok, flaky)) {
      assertThat(traceContext(id)).as("job %d", id).contains("\"traceparent\": "
          + "\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\"");
    }

    f.closeLater(worker(jobs).concurrency(2)
        .handler("ok", Object.class, (p, job) -> { })
        .handler("flaky", Object.class, (p, job) -> {
          if (job.attempt() == 1) {
            throw new IllegalStateException("first attempt fails");
          }
        }).start());
    Await.until("both succeeded", WAIT, () -> f.count("state = 'succeeded'") == 2);

    assertThat(tracing.of(ok)).singleElement().satisfies(s -> {
      assertThat(s.carried).isEqualTo(context);
      assertThat(s.results).containsExactly(JobListener.AttemptResult.SUCCEEDED);
      assertThat(s.failures).isEmpty();
      assertThat(s.endThread).isEqualTo(s.thread);
    });
    List<Seen> attempts = tracing.of(flaky);
    assertThat(attempts).extracting(s -> s.attempt).containsExactly(1, 2);
    assertThat(attempts).allSatisfy(s -> assertThat(s.carried).isEqualTo(context));
    assertThat(attempts.get(0).results).containsExactly(JobListener.AttemptResult.RETRY);
    assertThat(attempts.get(0).failures).singleElement().satisfies(
        t -> assertThat(t).isInstanceOf(IllegalStateException.class).hasMessage("first attempt fails"));
    assertThat(attempts.get(1).results).containsExactly(JobListener.AttemptResult.SUCCEEDED);
  }

  @Test
  void leaseClaims_andKeyedClaims_returnTheContextToo() throws Exception {
    Recording tracing = new Recording();
    JobQueue jobs = jobs(tracing);
    Map<String, String> context = Map.of("traceparent", "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
    tracing.current = context;
    long keyed = jobs.enqueue(f.job("keyed", null).concurrencyKey("tenant-1")).id();
    long leased = jobs.enqueue(f.job("leased", null)).id();
    tracing.current = null;
    // the keyed claim returns the slot lock after the trace context: both must read right
    f.closeLater(worker(jobs).concurrencyPerKey(1).handler("keyed", Object.class, (p, job) -> { }).start());
    f.closeLater(worker(jobs).claimMode(ClaimMode.LEASE).handler("leased", Object.class, (p, job) -> { }).start());
    Await.until("both succeeded", WAIT, () -> f.count("state = 'succeeded'") == 2);
    assertThat(tracing.of(keyed)).singleElement().satisfies(s -> assertThat(s.carried).isEqualTo(context));
    assertThat(tracing.of(leased)).singleElement().satisfies(s -> assertThat(s.carried).isEqualTo(context));
  }

  @Test
  void nothingCaptured_storesNull_andTheAttemptGetsAnEmptyMap() throws Exception {
    Recording tracing = new Recording();
    JobQueue jobs = jobs(tracing);
    tracing.current = Map.of();
    long empty = jobs.enqueue(f.job("ok", null)).id();
    tracing.current = null;
    long none = jobs.enqueue(f.job("ok", null)).id();
    assertThat(traceContext(empty)).isNull();
    assertThat(traceContext(none)).isNull();

    f.closeLater(worker(jobs).handler("ok", Object.class, (p, job) -> { }).start());
    Await.until("both succeeded", WAIT, () -> f.count("state = 'succeeded'") == 2);
    assertThat(tracing.seen).hasSize(2).allSatisfy(s -> assertThat(s.carried).isEmpty());
  }

  @Test
  void noTracing_storesNull() throws Exception {
    JobQueue jobs = f.jobs("n1");
    long id = jobs.enqueue(f.job("ok", null)).id();
    assertThat(traceContext(id)).isNull();
    f.closeLater(worker(jobs).handler("ok", Object.class, (p, job) -> { }).start());
    Await.until("succeeded", WAIT, () -> f.count("state = 'succeeded'") == 1);
  }

  @Test
  void cancelledJob_endsItsAttemptOnce_asCancelled_withTheInterrupt() throws Exception {
    Recording tracing = new Recording();
    JobQueue jobs = jobs(tracing);
    CountDownLatch started = new CountDownLatch(1);
    f.closeLater(worker(jobs).handler("slow", Object.class, (p, job) -> {
      started.countDown();
      Thread.sleep(60_000); // simulated long work, ended by the cancel's interrupt
    }).start());
    long id = jobs.enqueue(f.job("slow", null)).id();
    assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(jobs.admin().cancel(id)).isTrue();
    Await.until("cancelled", WAIT, () -> jobs.admin().job(id).orElseThrow().state() == JobState.CANCELLED);
    assertThat(tracing.of(id)).singleElement().satisfies(s -> {
      assertThat(s.results).containsExactly(JobListener.AttemptResult.CANCELLED);
      assertThat(s.failures).singleElement().isInstanceOf(InterruptedException.class);
    });
  }

  @Test
  void aThrowingTracing_changesNothingInTheJobs() throws Exception {
    List<String> calls = new ArrayList<>();
    JobQueue jobs = jobs(new JobTracing() {
      @Override
      public Map<String, String> capture() {
        synchronized (calls) {
          calls.add("capture");
        }
        throw new IllegalStateException("capture fails");
      }

      @Override
      public Attempt startAttempt(JobContext job, Map<String, String> carried) {
        synchronized (calls) {
          calls.add("start");
        }
        throw new IllegalStateException("start fails");
      }
    });
    long id = jobs.enqueue(f.job("ok", null)).id();
    assertThat(traceContext(id)).isNull();
    f.closeLater(worker(jobs).handler("ok", Object.class, (p, job) -> { }).start());
    Await.until("succeeded", WAIT, () -> f.count("state = 'succeeded'") == 1);
    synchronized (calls) {
      assertThat(calls).containsExactly("capture", "start");
    }
  }

  @Test
  void tracing_setTwice_isRefused() {
    JobQueueBuilder b = JobQueue.builder(f.locks("n1")).tracing(new Recording());
    assertThatThrownBy(() -> b.tracing(new Recording())).isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("tracing was already set to ");
  }
}
