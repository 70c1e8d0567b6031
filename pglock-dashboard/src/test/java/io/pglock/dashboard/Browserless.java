package io.pglock.dashboard;

import java.io.IOException;
import java.net.CookieManager;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** An HTTP client that keeps cookies like a browser, for tests that post the dashboard's forms. */
final class Browserless {
  private static final Pattern TOKEN = Pattern.compile("name=\"_pglock_csrf\" value=\"([^\"]+)\"");
  private final HttpClient client = HttpClient.newBuilder().cookieHandler(new CookieManager())
      .connectTimeout(Duration.ofSeconds(30)).followRedirects(HttpClient.Redirect.NEVER).build();
  private final URI base;

  Browserless(URI base) {
    this.base = base;
  }

  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return client.send(HttpRequest.newBuilder(base.resolve(path.substring(1))).timeout(Duration.ofSeconds(60)).GET()
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Gets a page, reads its anti-forgery token, and posts a form with it. */
  HttpResponse<String> post(String formPage, String path, Map<String, String> fields) throws IOException,
      InterruptedException {
    Matcher m = TOKEN.matcher(get(formPage).body());
    String token = m.find() ? m.group(1) : "";
    java.util.LinkedHashMap<String, String> all = new java.util.LinkedHashMap<>(fields);
    all.put("_pglock_csrf", token);
    return postRaw(path, all);
  }

  /** Posts a form as given, without adding a token. */
  HttpResponse<String> postRaw(String path, Map<String, String> fields) throws IOException, InterruptedException {
    String body = fields.entrySet().stream().map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "="
        + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8)).collect(Collectors.joining("&"));
    return client.send(HttpRequest.newBuilder(base.resolve(path.substring(1))).timeout(Duration.ofSeconds(60))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
