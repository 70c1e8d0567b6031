package io.pglock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.queue.JobState;
import java.net.http.HttpResponse;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The dashboard under the application's Spring Security, on a real embedded Tomcat and the real
 * test database: the application's filter chain guards the path (HTTP Basic, two users: olga with
 * role OPS, victor without), Spring's CSRF protection stays on, and {@code pglock.dashboard.role=OPS}.
 * The pages' forms carry both Spring's token and the dashboard's; an action needs both, is taken
 * only for the role, and is recorded with the caller's name.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardSecurityTest {
  private final String namespace = SpringFleet.namespace("dashboard-security");
  private final String suffix = namespace.substring(namespace.length() - 8);
  private final String queue = "dashboard-security-" + suffix;
  private final List<Long> jobs = new ArrayList<>();
  private ConfigurableApplicationContext app;

  /** The test app: its own security for the dashboard's path, with Spring's defaults (CSRF on). */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class SecuredApp {
    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
      return http.authorizeHttpRequests(a -> a.requestMatchers("/pglock/**").authenticated().anyRequest().permitAll())
          .httpBasic(Customizer.withDefaults()).build();
    }

    @Bean
    UserDetailsService users() {
      return new InMemoryUserDetailsManager(
          User.withUsername("olga").password("{noop}olga-secret").roles("OPS").build(),
          User.withUsername("victor").password("{noop}victor-secret").roles("VIEWER").build());
    }
  }

  @BeforeAll
  void start() {
    app = SpringFleet.startWeb(SecuredApp.class, null, namespace, "dashboard-secured-" + suffix,
        "pglock.dashboard.enabled=true", "pglock.dashboard.role=OPS");
  }

  @AfterAll
  void stop() throws SQLException {
    if (app != null) {
      app.close();
    }
    DashboardTest.deleteJobsAndTheirActions(queue, jobs);
  }

  private DashboardBrowser browser(String user) {
    return new DashboardBrowser(SpringFleet.uri(app), user, user == null ? null : user + "-secret");
  }

  @Test
  void anAnonymousCallerIsAskedToSignIn() throws Exception {
    HttpResponse<String> r = browser(null).get("/pglock/");
    assertThat(r.statusCode()).isEqualTo(401);
    assertThat(r.headers().firstValue("WWW-Authenticate")).get().asString().startsWith("Basic");
  }

  @Test
  void anOperatorActsWithBothTokensAndIsRecordedByName() throws Exception {
    long id = DashboardTest.enqueue(app, queue, jobs);
    DashboardBrowser olga = browser("olga");
    HttpResponse<String> page = olga.get("/pglock/jobs/" + id);
    assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
    assertThat(page.body()).contains("value=\"job.discard\"");
    // a first visit: Spring's new session (its CSRF token) and the dashboard's cookie, both kept
    assertThat(page.headers().allValues("Set-Cookie")).anyMatch(c -> c.startsWith("JSESSIONID="))
        .anyMatch(c -> c.startsWith("pglock_csrf="));
    String spring = DashboardBrowser.field(page.body(), "_csrf").orElseThrow(() -> new AssertionError(page.body()));
    String own = DashboardBrowser.field(page.body(), "_pglock_csrf").orElseThrow();

    HttpResponse<String> r = olga.post("/pglock/jobs/" + id,
        Map.of("action", "job.discard", "_csrf", spring, "_pglock_csrf", own));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(303);
    assertThat(DashboardTest.state(app, id)).isEqualTo(JobState.DISCARDED);
    assertThat(DashboardTest.actions(id)).containsExactly("olga job.discard done");
  }

  @Test
  void withoutSpringsTokenSpringRefusesThePost() throws Exception {
    long id = DashboardTest.enqueue(app, queue, jobs);
    DashboardBrowser olga = browser("olga");
    String page = olga.get("/pglock/jobs/" + id).body();
    String own = DashboardBrowser.field(page, "_pglock_csrf").orElseThrow(() -> new AssertionError(page));

    HttpResponse<String> r = olga.post("/pglock/jobs/" + id, Map.of("action", "job.discard", "_pglock_csrf", own));
    assertThat(r.statusCode()).isEqualTo(403);
    assertThat(DashboardTest.state(app, id)).isEqualTo(JobState.AVAILABLE);
    assertThat(DashboardTest.actions(id)).as("the dashboard never saw the POST").isEmpty();
  }

  @Test
  void aCallerWithoutTheRoleSeesNoActionAndTheDashboardRefusesTheirPost() throws Exception {
    long id = DashboardTest.enqueue(app, queue, jobs);
    HttpResponse<String> page = browser("victor").get("/pglock/jobs/" + id);
    assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
    assertThat(page.body()).contains("Job " + id).doesNotContain("name=\"action\"");

    // The tokens belong to the browser (its cookie and session), not to the user: victor signs in
    // on a browser where olga's page was loaded, and posts its form. Spring lets it by; the
    // dashboard's authorizer does not.
    DashboardBrowser shared = browser("olga");
    String form = shared.get("/pglock/jobs/" + id).body();
    Map<String, String> tokens = Map.of("_csrf", DashboardBrowser.field(form, "_csrf").orElseThrow(),
        "_pglock_csrf", DashboardBrowser.field(form, "_pglock_csrf").orElseThrow());
    HttpResponse<String> r = shared.as("victor", "victor-secret").post("/pglock/jobs/" + id,
        DashboardBrowser.form(tokens, "action", "job.discard"));
    assertThat(r.statusCode()).isEqualTo(403);
    assertThat(r.body()).contains("victor may not job.discard");
    assertThat(DashboardTest.state(app, id)).isEqualTo(JobState.AVAILABLE);
    assertThat(DashboardTest.actions(id)).containsExactly("victor job.discard refused");
  }

  @Test
  void withoutARoleEveryAuthenticatedCallerMayAct() throws Exception {
    try (ConfigurableApplicationContext open = SpringFleet.startWeb(SecuredApp.class, null, namespace,
        "dashboard-open-" + suffix, "pglock.dashboard.enabled=true")) {
      long id = DashboardTest.enqueue(open, queue, jobs);
      DashboardBrowser victor = new DashboardBrowser(SpringFleet.uri(open), "victor", "victor-secret");
      String page = victor.get("/pglock/jobs/" + id).body();
      assertThat(page).contains("value=\"job.discard\"");
      HttpResponse<String> r = victor.post("/pglock/jobs/" + id, Map.of("action", "job.discard",
          "_csrf", DashboardBrowser.field(page, "_csrf").orElseThrow(),
          "_pglock_csrf", DashboardBrowser.field(page, "_pglock_csrf").orElseThrow()));
      assertThat(r.statusCode()).as(r.body()).isEqualTo(303);
      assertThat(DashboardTest.actions(id)).containsExactly("victor job.discard done");
    }
  }
}
