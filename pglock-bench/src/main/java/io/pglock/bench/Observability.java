package io.pglock.bench;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.pglock.PgLocks;
import io.pglock.PgLocksBuilder;
import io.pglock.micrometer.JobMetrics;
import io.pglock.micrometer.OpenTelemetryJobTracing;
import io.pglock.micrometer.PgLocksMetrics;
import io.pglock.micrometer.QueueGauges;
import io.pglock.queue.JobAdmin;
import io.pglock.queue.JobQueueBuilder;
import io.pglock.queue.JobWorkerBuilder;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * B13's observed queue: what a production application with metrics and tracing on would set, minus
 * the network. One {@link SimpleMeterRegistry} (cumulative timers, no histogram) with
 * {@link PgLocksMetrics} on the queue's {@code PgLocks} (listener and gauges), {@link JobMetrics} on
 * the worker and {@link QueueGauges} (refresh 10 s, its default) while the workers run; one
 * {@link OpenTelemetrySdk} whose {@link SdkTracerProvider} samples every span (always on) and hands
 * them to a {@link BatchSpanProcessor} (its defaults) that exports to {@link CountingExporter}, which
 * counts and discards them; {@link OpenTelemetryJobTracing} on the queue. Every enqueue call runs in
 * a span of its own, so that each job carries a trace context and each attempt's span is its child.
 * One instance serves every observed burn-down of a run; {@link #close()} shuts the SDK down.
 */
final class Observability implements QueueInstrumentation, AutoCloseable {
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final CountingExporter exporter = new CountingExporter();
  private final OpenTelemetrySdk sdk;
  private final Tracer tracer;
  private final PgLocksMetrics lockMetrics = new PgLocksMetrics(registry);
  private final JobMetrics jobMetrics = new JobMetrics(registry);
  final OpenTelemetryJobTracing tracing;
  private final List<Meter> bound = new ArrayList<>();
  /** The queue gauges when the last burn-down's workers stopped, for the notes. */
  volatile String lastGauges = "none";

  Observability() {
    sdk = OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().setSampler(Sampler.alwaysOn())
            .addSpanProcessor(BatchSpanProcessor.builder(exporter).build()).build())
        .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
        .build();
    tracer = sdk.getTracer("pglock-bench");
    tracing = OpenTelemetryJobTracing.create(sdk);
  }

  @Override
  public PgLocksBuilder locks(PgLocksBuilder b) {
    return b.listener(lockMetrics);
  }

  @Override
  public void bind(PgLocks locks) {
    bound.addAll(lockMetrics.bind(locks));
  }

  @Override
  public JobQueueBuilder queue(JobQueueBuilder b) {
    return b.tracing(tracing);
  }

  @Override
  public JobWorkerBuilder worker(JobWorkerBuilder b) {
    return b.listener(jobMetrics);
  }

  @Override
  public void enqueue(Runnable enqueue) {
    Span span = tracer.spanBuilder("b13 enqueue").startSpan();
    try (Scope s = span.makeCurrent()) {
      enqueue.run();
    } finally {
      span.end();
    }
  }

  @Override
  public AutoCloseable started(DataSource pool) {
    QueueGauges gauges = QueueGauges.bind(registry, JobAdmin.of(pool, PglockBurnDown.SCHEMA));
    return () -> {
      lastGauges = gauges(QueueGauges.JOBS) + "; " + QueueGauges.LAG + " " + gauges(QueueGauges.LAG);
      gauges.close();
      bound.forEach(registry::remove); // the next burn-down's PgLocks binds its own
      bound.clear();
    };
  }

  @Override
  public String settings() {
    return "; observed: PgLocksBuilder.listener(new PgLocksMetrics(registry)) and bind(locks), "
        + "JobWorkerBuilder.listener(new JobMetrics(registry)), QueueGauges.bind(registry, JobAdmin.of(pool, "
        + "\"pglock\")) (refresh 10 s) while the workers run, on a SimpleMeterRegistry; JobQueueBuilder.tracing("
        + "OpenTelemetryJobTracing.create(sdk)), sdk: SdkTracerProvider, Sampler.alwaysOn(), BatchSpanProcessor "
        + "(defaults) to an exporter that counts and discards; each enqueueAll in a span of its own";
  }

  /** Exports what the batch processor still holds; false if that took longer than 10 s. */
  boolean flush() {
    return sdk.getSdkTracerProvider().forceFlush().join(10, TimeUnit.SECONDS).isSuccess();
  }

  /** Attempts {@code pglock.jobs.attempts} has counted (every result). */
  long attempts() {
    return count(registry, JobMetrics.ATTEMPTS);
  }

  /** The count of every timer of the name. */
  static long count(MeterRegistry registry, String timer) {
    return registry.find(timer).timers().stream().mapToLong(Timer::count).sum();
  }

  /** The value of every gauge of the name, as "tags=value", for the notes. */
  String gauges(String name) {
    StringBuilder b = new StringBuilder();
    registry.find(name).gauges().stream().filter(g -> String.valueOf(g.getId().getTag("queue")).startsWith("b13-"))
        .forEach(g -> b.append(b.length() == 0 ? "" : ", ").append(g.getId().getTag("queue"))
            .append(g.getId().getTag("state") == null ? "" : " " + g.getId().getTag("state")).append(' ')
            .append(Report.fmt("%.0f", g.value())));
    return b.length() == 0 ? "none" : b.toString();
  }

  @Override
  public void close() {
    sdk.close();
    registry.close();
  }

  /** A span exporter that counts the spans it gets, and those with a parent, then drops them. */
  static final class CountingExporter implements SpanExporter {
    final AtomicLong spans = new AtomicLong();
    final AtomicLong children = new AtomicLong();

    @Override
    public CompletableResultCode export(Collection<SpanData> batch) {
      long withParent = 0;
      for (SpanData s : batch) {
        if (s.getParentSpanContext().isValid()) {
          withParent++;
        }
      }
      spans.addAndGet(batch.size());
      children.addAndGet(withParent);
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }
}
