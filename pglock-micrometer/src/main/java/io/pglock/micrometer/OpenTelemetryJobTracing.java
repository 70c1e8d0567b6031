package io.pglock.micrometer;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.pglock.queue.JobContext;
import io.pglock.queue.JobListener;
import io.pglock.queue.JobTracing;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * OpenTelemetry traces for a job queue: the trace context current when a job is enqueued travels
 * with the job, and each attempt of its handler runs in a span of its own, a child of the enqueuing
 * span, following OpenTelemetry's messaging semantic conventions. No Spring needed:
 *
 * <pre>{@code
 * JobQueue jobs = JobQueue.builder(locks).tracing(OpenTelemetryJobTracing.create(openTelemetry)).build();
 * }</pre>
 *
 * <p><b>At enqueue</b>, the current {@link Context} is injected with the instance's text-map
 * propagator (for the SDK's autoconfiguration: W3C {@code traceparent}, {@code tracestate} and
 * {@code baggage}; an instance with no propagator gets W3C trace context) into a small map that is
 * stored with the jobs (column {@code trace_context}). With nothing current (no span, no baggage),
 * nothing is stored.
 *
 * <p><b>Around each attempt</b>, on the handler's thread: a span named {@code process <queue>}, of
 * kind {@link SpanKind#CONSUMER}, whose parent is the context carried from the enqueue (with a link
 * to it as well; a job that carries none gets a new trace), with the attributes
 * {@code messaging.system} = {@code pglock}, {@code messaging.operation.type} and
 * {@code messaging.operation.name} = {@code process}, {@code messaging.destination.name} = the
 * queue, {@code messaging.message.id} = the job's id, {@code pglock.job.kind},
 * {@code pglock.job.attempt}, and once the handler ended {@code pglock.job.result} (as
 * {@link JobListener.AttemptResult} names it). The span is current while the handler runs, so that
 * the handler's own spans are its children. When the handler throws, the span records the exception,
 * gets {@code error.type} = the exception's class and the status {@link StatusCode#ERROR}. A retry is
 * another span in the same trace.
 *
 * <p>Thread-safe: one instance serves a queue and all its workers. The OpenTelemetry API is an
 * optional dependency of this module: this class needs {@code io.opentelemetry:opentelemetry-api} on
 * the class path (and {@code pglock-queue}). See {@code docs/tracing.md}.
 */
public final class OpenTelemetryJobTracing implements JobTracing {
  /** The instrumentation scope of the spans (the tracer's name). */
  public static final String INSTRUMENTATION_SCOPE = "io.pglock.micrometer";

  static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
  static final AttributeKey<String> OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
  static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
  static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
  static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
  static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
  static final AttributeKey<String> KIND = AttributeKey.stringKey("pglock.job.kind");
  static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("pglock.job.attempt");
  static final AttributeKey<String> RESULT = AttributeKey.stringKey("pglock.job.result");

  private static final TextMapSetter<Map<String, String>> SETTER = (carrier, key, value) -> {
    if (carrier != null) {
      carrier.put(key, value);
    }
  };
  private static final TextMapGetter<Map<String, String>> GETTER = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(Map<String, String> carrier) {
      return carrier.keySet();
    }

    @Override
    public String get(Map<String, String> carrier, String key) {
      return carrier == null ? null : carrier.get(key);
    }
  };

  private final Tracer tracer;
  private final TextMapPropagator propagator;

  private OpenTelemetryJobTracing(OpenTelemetry openTelemetry) {
    this.tracer = openTelemetry.getTracer(INSTRUMENTATION_SCOPE);
    TextMapPropagator p = openTelemetry.getPropagators().getTextMapPropagator();
    // an SDK built without propagators has the no-op one, which would carry nothing
    this.propagator = p.fields().isEmpty() ? W3CTraceContextPropagator.getInstance() : p;
  }

  /**
   * Tracing with an OpenTelemetry instance: its tracer provider makes the spans, its text-map
   * propagator carries the context (W3C trace context if it has none).
   *
   * @param openTelemetry the instance, for example the SDK the application configured, or
   *     {@code GlobalOpenTelemetry.get()}
   * @return the tracing, for {@link io.pglock.queue.JobQueueBuilder#tracing(JobTracing)}
   */
  public static OpenTelemetryJobTracing create(OpenTelemetry openTelemetry) {
    return new OpenTelemetryJobTracing(Objects.requireNonNull(openTelemetry, "openTelemetry"));
  }

  /**
   * Injects the current context with the propagator.
   *
   * @return the propagator's fields ({@code traceparent}, ...), or null when nothing is current
   */
  @Override
  public Map<String, String> capture() {
    Context current = Context.current();
    if (current == Context.root()) {
      return null; // nothing to carry, and no map to make
    }
    Map<String, String> carrier = new HashMap<>(4);
    propagator.inject(current, carrier, SETTER);
    return carrier;
  }

  /**
   * Starts the attempt's span, a child of the carried context, and makes it current on this thread.
   *
   * @return the span and its scope, ended and closed by {@link Attempt#end}
   */
  @Override
  public Attempt startAttempt(JobContext job, Map<String, String> carried) {
    // on top of the root context: a handler thread carries nothing of its own that the span should join
    Context parent = carried.isEmpty() ? Context.root() : propagator.extract(Context.root(), carried, GETTER);
    SpanBuilder builder = tracer.spanBuilder("process " + job.queue())
        .setSpanKind(SpanKind.CONSUMER)
        .setParent(parent)
        .setAttribute(MESSAGING_SYSTEM, "pglock")
        .setAttribute(OPERATION_TYPE, "process")
        .setAttribute(OPERATION_NAME, "process")
        .setAttribute(DESTINATION, job.queue())
        .setAttribute(MESSAGE_ID, Long.toString(job.id()))
        .setAttribute(KIND, job.kind())
        .setAttribute(ATTEMPT, (long) job.attempt());
    SpanContext creation = Span.fromContext(parent).getSpanContext();
    if (creation.isValid()) {
      builder.addLink(creation); // the conventions' link to the creation context, beside the parent
    }
    Span started = builder.startSpan();
    Scope scope = parent.with(started).makeCurrent(); // the carried baggage, if any, is current too
    return new SpanAttempt(started, scope);
  }

  @Override
  public String toString() {
    return "OpenTelemetryJobTracing[" + propagator + "]";
  }

  /** One attempt's span and the scope that made it current; ended once, on the handler's thread. */
  private static final class SpanAttempt implements Attempt {
    private final Span span;
    private final Scope scope;
    private boolean ended;

    SpanAttempt(Span span, Scope scope) {
      this.span = span;
      this.scope = scope;
    }

    @Override
    public void end(JobListener.AttemptResult result, Throwable failure) {
      if (ended) {
        return;
      }
      ended = true;
      try {
        span.setAttribute(RESULT, result.name());
        if (failure != null) {
          span.recordException(failure);
          span.setAttribute(ERROR_TYPE, failure.getClass().getName());
          span.setStatus(StatusCode.ERROR);
        }
      } finally {
        scope.close();
        span.end();
      }
    }
  }
}
