package io.pglock.bench;

import java.io.IOException;
import java.net.CookieManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * B14's browser: GETs the dashboard's pages over HTTP/1.1 on loopback, keeping the cookie the first
 * page sets (as a browser does), and times each from the request's send until its whole body is read.
 */
final class DashboardClient {
  private static final Pattern OLDER = Pattern.compile("<a class=\"next\" href=\"([^\"]*)\">Older</a>");
  private final URI base;
  private final HttpClient http;

  DashboardClient(URI base) {
    this.base = base;
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).cookieHandler(new CookieManager())
        .connectTimeout(Duration.ofSeconds(10)).build();
  }

  /**
   * One page's answer.
   *
   * @param status the HTTP status
   * @param body the page
   * @param nanos from the send until the body was read
   */
  record Answer(int status, String body, long nanos) {
    double millis() {
      return nanos / 1e6;
    }

    /** {@return the page's "Older" link (a path with its query), if it has one} */
    Optional<String> older() {
      Matcher m = OLDER.matcher(body);
      return m.find() ? Optional.of(m.group(1).replace("&amp;", "&")) : Optional.empty();
    }
  }

  /**
   * GETs a path (with its query) as the page does when a browser opens it, or, with {@code live}, as
   * its script does every refresh interval ({@code X-Pglock-Live: 1}).
   */
  Answer get(String pathAndQuery, boolean live) throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(pathAndQuery)).timeout(Duration.ofSeconds(60)).GET();
    if (live) {
      b.header("X-Pglock-Live", "1");
    }
    HttpRequest request = b.build();
    long t0 = System.nanoTime();
    HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
    long nanos = System.nanoTime() - t0;
    return new Answer(r.statusCode(), r.body(), nanos);
  }
}
