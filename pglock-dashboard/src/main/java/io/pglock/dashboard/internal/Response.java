package io.pglock.dashboard.internal;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A response before it is sent.
 *
 * @param status the status code
 * @param headers the headers
 * @param body the body
 */
public record Response(int status, Map<String, String> headers, byte[] body) {
  /** The headers of every page: no framing, no inline script or style, nothing cached. */
  static Map<String, String> pageHeaders(String contentType) {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("Content-Type", contentType);
    h.put("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none';"
        + " form-action 'self'; base-uri 'none'");
    h.put("X-Content-Type-Options", "nosniff");
    h.put("X-Frame-Options", "DENY");
    h.put("Referrer-Policy", "same-origin");
    h.put("Cache-Control", "no-store");
    return h;
  }

  /** {@return an HTML page} */
  static Response html(int status, String html) {
    return new Response(status, pageHeaders("text/html; charset=utf-8"), html.getBytes(StandardCharsets.UTF_8));
  }

  /** {@return a 303 redirect} */
  static Response redirect(String location) {
    Map<String, String> h = pageHeaders("text/plain; charset=utf-8");
    h.put("Location", location);
    return new Response(303, h, new byte[0]);
  }

  /** {@return the response with one more header} */
  Response with(String name, String value) {
    Map<String, String> h = new LinkedHashMap<>(headers);
    h.put(name, value);
    return new Response(status, h, body);
  }
}
