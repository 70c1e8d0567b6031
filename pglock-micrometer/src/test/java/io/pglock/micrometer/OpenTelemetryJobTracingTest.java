package io.pglock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.pglock.PgLocks;
import io.pglock.queue.Backoff;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobQueueBuilder;
import io.pglock.queue.JobRequest;
import io.pglock.queue.JobWorkerBuilder;
import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Job traces against the real database and an in-memory OpenTelemetry SDK. */
@ExtendWith(NoLeakedLocks.class)
class OpenTelemetryJobTracingTest extends MetricsTestSupport {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private final String queue = "tracing-" + UUID.randomUUID().toString().substring(0, 8);
  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final SdkTracerProvider tracerProvider =
      SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
  private final OpenTelemetrySdk openTelemetry = OpenTelemetrySdk.builder().setTracerProvider(tracerProvider)
      .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
  private final Tracer testTracer = openTelemetry.getTracer("test");
  /** What the handler saw as the current span, by job attempt ("id/attempt"). */
  private final Map<String, SpanContext> currentInHandler = new ConcurrentHashMap<>();

  @AfterEach
  void closeAndDelete() throws Exception {
    closeOpen();
    openTelemetry.close();
    delete(queue, "DELETE FROM pglock.job WHERE queue = ?");
  }

  private JobQueue jobs(UnaryOperator<JobQueueBuilder> options) {
    PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).namespace("tracing-jobs")
        .nodeName("tracing-jobs").build();
    open.add(locks);
    JobQueue jobs = options.apply(JobQueue.builder(locks)).build();
    open.add(jobs);
    return jobs;
  }

  private JobQueue tracedJobs() {
    return jobs(b -> b.tracing(OpenTelemetryJobTracing.create(openTelemetry)));
  }

  /** A worker whose "ok" handler succeeds and "flaky" handler fails its first attempt; both start a span of their own. */
  private void startWorker(JobQueue jobs) {
    JobWorkerBuilder w = jobs.worker(queue).pollInterval(Duration.ofMillis(100)).shutdownTimeout(Duration.ofSeconds(5))
        .backoff(Backoff.exponential(Duration.ofMillis(10), Duration.ofMillis(10)));
    w.handler("ok", Object.class, (p, job) -> {
      currentInHandler.put(job.id() + "/" + job.attempt(), Span.current().getSpanContext());
      testTracer.spanBuilder("inner").startSpan().end(); // a child of whatever is current
    });
    w.handler("flaky", Object.class, (p, job) -> {
      currentInHandler.put(job.id() + "/" + job.attempt(), Span.current().getSpanContext());
      if (job.attempt() == 1) {
        throw new IllegalStateException("fails once on purpose");
      }
    });
    open.add(w.start());
  }

  private long succeeded() {
    return count("state = 'succeeded'");
  }

  private long count(String where) {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pglock.job WHERE queue = ? AND " + where)) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String traceparent(long id) throws Exception {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT trace_context->>'traceparent', trace_context IS NULL"
            + " FROM pglock.job WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("job %d exists", id).isTrue();
        return rs.getBoolean(2) ? null : rs.getString(1);
      }
    }
  }

  private List<SpanData> processSpans() {
    return exporter.getFinishedSpanItems().stream().filter(s -> s.getName().equals("process " + queue)).toList();
  }

  private static <T> T attr(SpanData span, AttributeKey<T> key) {
    return span.getAttributes().get(key);
  }

  @Test
  void enqueueInsideASpan_theAttemptRunsInAConsumerSpan_childOfIt_currentInTheHandler() throws Exception {
    JobQueue jobs = tracedJobs();
    Span enqueuing = testTracer.spanBuilder("enqueuing").startSpan();
    long id;
    try (Scope ignored = enqueuing.makeCurrent()) {
      id = jobs.enqueue(JobRequest.of("ok", null).queue(queue)).id();
    } finally {
      enqueuing.end();
    }
    SpanContext parent = enqueuing.getSpanContext();
    assertThat(traceparent(id))
        .isEqualTo("00-" + parent.getTraceId() + "-" + parent.getSpanId() + "-" + parent.getTraceFlags().asHex());

    startWorker(jobs);
    Await.until("succeeded, its span ended", WAIT, () -> succeeded() == 1 && processSpans().size() == 1);
    SpanData span = processSpans().get(0);
    assertThat(span.getKind()).isEqualTo(SpanKind.CONSUMER);
    assertThat(span.getTraceId()).isEqualTo(parent.getTraceId());
    assertThat(span.getParentSpanId()).isEqualTo(parent.getSpanId());
    assertThat(span.getLinks()).singleElement().satisfies(l -> {
      assertThat(l.getSpanContext().getTraceId()).isEqualTo(parent.getTraceId());
      assertThat(l.getSpanContext().getSpanId()).isEqualTo(parent.getSpanId());
      assertThat(l.getSpanContext().isRemote()).as("read back from the job").isTrue();
    });
    assertThat(span.getInstrumentationScopeInfo().getName()).isEqualTo(OpenTelemetryJobTracing.INSTRUMENTATION_SCOPE);
    assertThat(attr(span, AttributeKey.stringKey("messaging.system"))).isEqualTo("pglock");
    assertThat(attr(span, AttributeKey.stringKey("messaging.operation.type"))).isEqualTo("process");
    assertThat(attr(span, AttributeKey.stringKey("messaging.operation.name"))).isEqualTo("process");
    assertThat(attr(span, AttributeKey.stringKey("messaging.destination.name"))).isEqualTo(queue);
    assertThat(attr(span, AttributeKey.stringKey("messaging.message.id"))).isEqualTo(Long.toString(id));
    assertThat(attr(span, AttributeKey.stringKey("pglock.job.kind"))).isEqualTo("ok");
    assertThat(attr(span, AttributeKey.longKey("pglock.job.attempt"))).isEqualTo(1L);
    assertThat(attr(span, AttributeKey.stringKey("pglock.job.result"))).isEqualTo("SUCCEEDED");
    assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    assertThat(span.getEvents()).isEmpty();

    SpanContext seen = currentInHandler.get(id + "/1");
    assertThat(seen.getTraceId()).isEqualTo(parent.getTraceId());
    assertThat(seen.getSpanId()).as("the handler's current span is the attempt's").isEqualTo(span.getSpanId());
    SpanData inner = exporter.getFinishedSpanItems().stream().filter(s -> s.getName().equals("inner")).findFirst()
        .orElseThrow();
    assertThat(inner.getParentSpanId()).isEqualTo(span.getSpanId());
    assertThat(inner.getTraceId()).isEqualTo(parent.getTraceId());
  }

  @Test
  void aFailingAttempt_isAnErrorSpanWithTheException_andTheRetryAnotherSpanInTheSameTrace() throws Exception {
    JobQueue jobs = tracedJobs();
    Span enqueuing = testTracer.spanBuilder("enqueuing").startSpan();
    long id;
    try (Scope ignored = enqueuing.makeCurrent()) {
      id = jobs.enqueue(JobRequest.of("flaky", null).queue(queue).maxAttempts(3)).id();
    } finally {
      enqueuing.end();
    }
    SpanContext parent = enqueuing.getSpanContext();

    startWorker(jobs);
    Await.until("succeeded at the second attempt, both spans ended", WAIT,
        () -> succeeded() == 1 && processSpans().size() == 2);
    List<SpanData> spans = processSpans().stream()
        .sorted((a, b) -> Long.compare(attr(a, OpenTelemetryJobTracing.ATTEMPT), attr(b, OpenTelemetryJobTracing.ATTEMPT)))
        .toList();
    assertThat(spans).extracting(s -> attr(s, AttributeKey.longKey("pglock.job.attempt"))).containsExactly(1L, 2L);
    assertThat(spans).allSatisfy(s -> {
      assertThat(s.getTraceId()).isEqualTo(parent.getTraceId());
      assertThat(s.getParentSpanId()).isEqualTo(parent.getSpanId());
      assertThat(attr(s, AttributeKey.stringKey("messaging.message.id"))).isEqualTo(Long.toString(id));
    });
    assertThat(spans.get(0).getSpanId()).isNotEqualTo(spans.get(1).getSpanId());

    SpanData failed = spans.get(0);
    assertThat(failed.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(attr(failed, AttributeKey.stringKey("pglock.job.result"))).isEqualTo("RETRY");
    assertThat(attr(failed, AttributeKey.stringKey("error.type"))).isEqualTo(IllegalStateException.class.getName());
    EventData event = failed.getEvents().stream().filter(e -> e.getName().equals("exception")).findFirst()
        .orElseThrow(() -> new AssertionError("no exception event in " + failed.getEvents()));
    assertThat(event.getAttributes().get(AttributeKey.stringKey("exception.type")))
        .isEqualTo(IllegalStateException.class.getName());
    assertThat(event.getAttributes().get(AttributeKey.stringKey("exception.message"))).isEqualTo("fails once on purpose");

    SpanData retried = spans.get(1);
    assertThat(retried.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    assertThat(attr(retried, AttributeKey.stringKey("pglock.job.result"))).isEqualTo("SUCCEEDED");
    assertThat(retried.getEvents()).isEmpty();
    assertThat(currentInHandler.get(id + "/2").getSpanId()).isEqualTo(retried.getSpanId());
  }

  @Test
  void enqueueWithNoCurrentSpan_storesNothing_andTheAttemptRunsInANewRootSpan() throws Exception {
    JobQueue jobs = tracedJobs();
    assertThat(Span.current().getSpanContext().isValid()).isFalse();
    long id = jobs.enqueue(JobRequest.of("ok", null).queue(queue)).id();
    assertThat(count("trace_context IS NULL")).isEqualTo(1);

    startWorker(jobs);
    Await.until("succeeded, its span ended", WAIT, () -> succeeded() == 1 && processSpans().size() == 1);
    SpanData span = processSpans().get(0);
    assertThat(span.getParentSpanContext().isValid()).as("a root span").isFalse();
    assertThat(span.getLinks()).isEmpty();
    assertThat(span.getKind()).isEqualTo(SpanKind.CONSUMER);
    assertThat(attr(span, AttributeKey.stringKey("messaging.message.id"))).isEqualTo(Long.toString(id));
    SpanContext seen = currentInHandler.get(id + "/1");
    assertThat(seen.getSpanId()).isEqualTo(span.getSpanId());
    assertThat(seen.getTraceId()).isEqualTo(span.getTraceId());
  }

  @Test
  void noTracing_storesNothing_andTheHandlerRunsWithNoSpan() throws Exception {
    JobQueue jobs = jobs(b -> b);
    Span enqueuing = testTracer.spanBuilder("enqueuing").startSpan();
    long id;
    try (Scope ignored = enqueuing.makeCurrent()) {
      id = jobs.enqueue(JobRequest.of("ok", null).queue(queue)).id();
    } finally {
      enqueuing.end();
    }
    assertThat(traceparent(id)).isNull();
    assertThat(count("trace_context IS NULL")).isEqualTo(1);

    startWorker(jobs);
    Await.until("succeeded", WAIT, () -> succeeded() == 1);
    assertThat(processSpans()).isEmpty();
    assertThat(currentInHandler.get(id + "/1").isValid()).as("no span current in the handler").isFalse();
  }
}
