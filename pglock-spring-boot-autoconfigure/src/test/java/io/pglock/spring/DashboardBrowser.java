package io.pglock.spring;

import java.io.IOException;
import java.net.CookieManager;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * An HTTP client that keeps cookies like a browser (the dashboard's anti-forgery cookie, the
 * servlet session that holds Spring Security's token), optionally signed in with HTTP Basic, for
 * tests that read the dashboard's pages and post its forms.
 */
final class DashboardBrowser {
  private final HttpClient client;
  private final URI base;
  private final String authorization;

  /**
   * A browser of a server.
   *
   * @param base the server's base URI, ending with /
   * @param user the user to sign in as with HTTP Basic, or null for an anonymous one
   * @param password the user's password
   */
  DashboardBrowser(URI base, String user, String password) {
    this(HttpClient.newBuilder().cookieHandler(new CookieManager()).connectTimeout(Duration.ofSeconds(30))
        .followRedirects(HttpClient.Redirect.NEVER).build(), base, user, password);
  }

  private DashboardBrowser(HttpClient client, URI base, String user, String password) {
    this.client = client;
    this.base = base;
    this.authorization = user == null ? null
        : "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
  }

  /** {@return the same browser (its cookies), signed in as another user} */
  DashboardBrowser as(String user, String password) {
    return new DashboardBrowser(client, base, user, password);
  }

  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return client.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Posts a form as given: the test adds the tokens it means to send. */
  HttpResponse<String> post(String path, Map<String, String> fields) throws IOException, InterruptedException {
    String body = fields.entrySet().stream().map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "="
        + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8)).collect(Collectors.joining("&"));
    return client.send(request(path).header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest.Builder request(String path) {
    HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path.substring(1))).timeout(Duration.ofSeconds(60));
    return authorization == null ? b : b.header("Authorization", authorization);
  }

  /** {@return the value of a page's first hidden field of a name, if the page has one} */
  static Optional<String> field(String page, String name) {
    Matcher m = Pattern.compile("name=\"" + Pattern.quote(name) + "\" value=\"([^\"]*)\"").matcher(page);
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }

  /** {@return fields and more, in order} */
  static Map<String, String> form(Map<String, String> fields, String... more) {
    Map<String, String> all = new LinkedHashMap<>(fields);
    for (int i = 0; i + 1 < more.length; i += 2) {
      all.put(more[i], more[i + 1]);
    }
    return all;
  }
}
