package io.pglock.dashboard.internal.data;

import io.pglock.dashboard.internal.http.Params;
import io.pglock.queue.JobState;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The jobs page's filter: queue, kind, state, enqueued between two times, payload content.
 *
 * @param queue the queue, or null
 * @param kind the kind, or null
 * @param state the state, or null for every state
 * @param from enqueued at or after, or null
 * @param to enqueued before, or null
 * @param payload a JSON value the payload contains ({@code {"customer": 42}}), or text it contains, or null
 */
public record JobFilter(String queue, String kind, JobState state, Instant from, Instant to, String payload) {

  /** {@return the filter of a request's parameters} */
  public static JobFilter of(Params p) {
    JobState state = p.get("state").map(s -> {
      try {
        return JobState.valueOf(s.toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("state '" + s + "' is not a job state: use available, running, retryable,"
            + " succeeded, discarded or cancelled");
      }
    }).orElse(null);
    return new JobFilter(p.get("queue").orElse(null), p.get("kind").orElse(null), state,
        p.get("from").map(s -> time("from", s)).orElse(null), p.get("to").map(s -> time("to", s)).orElse(null),
        p.get("payload").orElse(null));
  }

  private static Instant time(String field, String s) {
    try {
      if (s.length() == 10) {
        return LocalDate.parse(s).atStartOfDay().toInstant(ZoneOffset.UTC);
      }
      if (s.endsWith("Z") || s.matches(".*[+-]\\d\\d:\\d\\d$")) {
        return java.time.OffsetDateTime.parse(s).toInstant();
      }
      return LocalDateTime.parse(s).toInstant(ZoneOffset.UTC);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(field + " '" + s + "' is not a time: write 2026-11-26, 2026-11-26T14:30 (UTC)"
          + " or 2026-11-26T14:30:00+01:00");
    }
  }

  /** {@return true if the payload filter is a JSON value to contain rather than text} */
  public boolean payloadIsJson() {
    return payload != null && (payload.startsWith("{") || payload.startsWith("["));
  }

  /** {@return the filter as query parameters (for links and forms), without blanks} */
  public Map<String, String> params() {
    Map<String, String> m = new LinkedHashMap<>();
    put(m, "queue", queue);
    put(m, "kind", kind);
    put(m, "state", state == null ? null : state.name().toLowerCase(Locale.ROOT));
    put(m, "from", from == null ? null : from.toString());
    put(m, "to", to == null ? null : to.toString());
    put(m, "payload", payload);
    return m;
  }

  /** {@return the filter as a query string, starting with {@code ?} or empty} */
  public String query() {
    StringBuilder sb = new StringBuilder();
    params().forEach((k, v) -> sb.append(sb.length() == 0 ? '?' : '&').append(k).append('=')
        .append(URLEncoder.encode(v, StandardCharsets.UTF_8)));
    return sb.toString();
  }

  /** {@return a short description for the action log} */
  public String describe() {
    return params().isEmpty() ? "all jobs" : params().toString();
  }

  /** {@return the state's name in lower case, or ""} */
  public String stateName() {
    return state == null ? "" : state.name().toLowerCase(Locale.ROOT);
  }

  private static void put(Map<String, String> m, String k, String v) {
    if (v != null && !v.isBlank()) {
      m.put(k, v);
    }
  }
}
