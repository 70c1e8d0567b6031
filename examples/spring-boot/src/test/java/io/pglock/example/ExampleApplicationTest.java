package io.pglock.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.testing.Await;
import io.pglock.testing.TestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/** The example service, started as {@code run.sh} starts it but on the test database: it does what its README says. */
class ExampleApplicationTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();

  @Test
  void signupsEnqueueInTheirTransactionAndHealthIsUpAndTheDashboardShowsThem() throws Exception {
    String run = UUID.randomUUID().toString().substring(0, 8);
    TestDatabase db = TestDatabase.get();
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(ExampleApplication.class).properties(
        "spring.datasource.url=" + db.jdbcUrl(), "spring.datasource.username=" + (db.user() == null ? "" : db.user()),
        "server.port=0", "pglock.namespace=example-" + run, "pglock.node-name=example-" + run,
        "spring.main.banner-mode=off").run()) {
      int port = ((WebServerApplicationContext) app).getWebServer().getPort();
      String ok = "ok-" + run + "@example.com";
      String failed = "failed-" + run + "@example.com";
      assertThat(post(port, "/signups?email=" + ok).statusCode()).isEqualTo(200);
      assertThat(post(port, "/signups?email=" + failed + "&fail=true").statusCode()).isEqualTo(422);
      Welcomes welcomes = app.getBean(Welcomes.class);
      Await.until("the welcome email is sent", Duration.ofSeconds(60), () -> welcomes.sent() == 1);
      JdbcTemplate sql = app.getBean(JdbcTemplate.class);
      assertThat(sql.queryForObject("SELECT count(*) FROM pglock.job WHERE kind = 'welcome-email' AND payload->>'email' = ?",
          Integer.class, failed)).as("the rolled-back signup's job").isZero();
      HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
          + "/actuator/health/pglock")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(health.statusCode()).isEqualTo(200);
      assertThat(health.body()).contains("\"status\":\"UP\"").contains("example-" + run);
      HttpResponse<String> dashboard = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
          + "/pglock/jobs?kind=welcome-email&payload=" + ok)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(dashboard.statusCode()).isEqualTo(200);
      assertThat(dashboard.body()).as("the dashboard lists the job").contains(ok, "welcome-email");
      sql.update("DELETE FROM signup WHERE email = ?", ok);
    }
  }

  private HttpResponse<String> post(int port, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
  }
}
