package io.pglock.dashboard.internal.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsExchange;
import io.pglock.dashboard.DashboardCaller;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/** An exchange of the JDK's {@code HttpServer}: the context's path is the mount point. */
public final class JdkExchange implements Exchange {
  /** The largest form body read: the dashboard's forms are a few hundred bytes. */
  static final int MAX_FORM = 64 * 1024;
  private final HttpExchange exchange;
  private final String base;

  /** An exchange. */
  public JdkExchange(HttpExchange exchange) {
    this.exchange = exchange;
    String context = exchange.getHttpContext().getPath();
    this.base = context.endsWith("/") ? context.substring(0, context.length() - 1) : context;
  }

  @Override
  public String method() {
    return exchange.getRequestMethod();
  }

  @Override
  public String path() {
    String path = exchange.getRequestURI().getPath();
    String rest = path.length() >= base.length() ? path.substring(base.length()) : "/";
    return rest.isEmpty() ? "/" : rest;
  }

  @Override
  public String basePath() {
    return base;
  }

  @Override
  public Params query() {
    return Params.parse(exchange.getRequestURI().getRawQuery());
  }

  @Override
  public Params form() throws IOException {
    try (InputStream in = exchange.getRequestBody()) {
      byte[] body = in.readNBytes(MAX_FORM + 1);
      if (body.length > MAX_FORM) {
        throw new IllegalArgumentException("the form is larger than " + MAX_FORM + " bytes");
      }
      return Params.parse(new String(body, StandardCharsets.UTF_8));
    }
  }

  @Override
  public Optional<String> header(String name) {
    return Optional.ofNullable(exchange.getRequestHeaders().getFirst(name));
  }

  @Override
  public DashboardCaller caller() {
    String name = exchange.getPrincipal() == null ? null : exchange.getPrincipal().getUsername();
    return new DashboardCaller() {
      @Override
      public Optional<String> name() {
        return Optional.ofNullable(name);
      }

      @Override
      public boolean isInRole(String role) {
        return false;
      }
    };
  }

  @Override
  public Map<String, String> extraFormFields() {
    return Map.of();
  }

  @Override
  public boolean secure() {
    return exchange instanceof HttpsExchange;
  }

  @Override
  public void respond(int status, Map<String, String> headers, byte[] body) throws IOException {
    headers.forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
    boolean head = exchange.getRequestMethod().equals("HEAD");
    exchange.sendResponseHeaders(status, head || body.length == 0 ? -1 : body.length);
    if (!head && body.length > 0) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }
}
