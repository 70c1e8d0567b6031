package io.pglock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.dashboard.Dashboard;
import io.pglock.dashboard.DashboardAuthorizer;
import io.pglock.dashboard.DashboardServlet;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobRequest;
import io.pglock.queue.JobState;
import io.pglock.spring.boot.PgLockAutoConfiguration;
import io.pglock.spring.boot.PgLockDashboardAutoConfiguration;
import io.pglock.spring.boot.PgLockQueueAutoConfiguration;
import io.pglock.spring.boot.PgLockSchedulerAutoConfiguration;
import io.pglock.testing.TestDatabase;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The dashboard in a servlet application without Spring Security, on a real embedded Tomcat and the
 * real test database: off unless enabled, served at its path, its pages rendered, its actions taken
 * with the page's anti-forgery token and refused without it; and, with a context runner, the
 * settings it refuses and where it backs off. Spring Security is on this module's test class path
 * (for {@link DashboardSecurityTest}): a {@link FilteredClassLoader} hides it from these contexts'
 * conditions, as if the application did not have it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardTest {
  private final String namespace = SpringFleet.namespace("dashboard");
  private final String suffix = namespace.substring(namespace.length() - 8);
  /** The test's own queue: no worker takes its jobs, and they are deleted at the end. */
  private final String queue = "dashboard-" + suffix;
  private final List<Long> jobs = new ArrayList<>();
  private ConfigurableApplicationContext app;
  private DashboardBrowser browser;

  /** The test app: the starter's auto-configuration and nothing else. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {}

  static ClassLoader withoutSpringSecurity() {
    return new FilteredClassLoader("org.springframework.security");
  }

  @BeforeAll
  void start() {
    app = SpringFleet.startWeb(App.class, withoutSpringSecurity(), namespace, "dashboard-a-" + suffix,
        "pglock.dashboard.enabled=true");
    browser = new DashboardBrowser(SpringFleet.uri(app), null, null);
  }

  @AfterAll
  void stop() throws SQLException {
    if (app != null) {
      app.close();
    }
    deleteJobsAndTheirActions(queue, jobs);
  }

  @Test
  void pagesRenderAtThePath() throws Exception {
    long id = enqueue(app, queue, jobs);
    HttpResponse<String> overview = browser.get("/pglock/");
    assertThat(overview.statusCode()).as(overview.body()).isEqualTo(200);
    assertThat(overview.body()).contains("Overview");
    assertThat(browser.get("/pglock").statusCode()).isEqualTo(200);
    HttpResponse<String> list = browser.get("/pglock/jobs?queue=" + queue);
    assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
    assertThat(list.body()).contains("/pglock/jobs/" + id + "\"");
    assertThat(app.getBean(Dashboard.class).schema()).isEqualTo("pglock");
  }

  @Test
  void anActionWithThePagesTokenIsTakenAndOneWithoutIsRefused() throws Exception {
    long id = enqueue(app, queue, jobs);
    String page = browser.get("/pglock/jobs/" + id).body();
    String token = DashboardBrowser.field(page, "_pglock_csrf").orElseThrow(() -> new AssertionError(page));
    assertThat(page).contains("value=\"job.discard\"").doesNotContain("name=\"_csrf\"");

    HttpResponse<String> without = browser.post("/pglock/jobs/" + id, Map.of("action", "job.discard"));
    assertThat(without.statusCode()).isEqualTo(403);
    assertThat(without.body()).contains("anti-forgery");
    assertThat(state(app, id)).isEqualTo(JobState.AVAILABLE);

    HttpResponse<String> with = browser.post("/pglock/jobs/" + id,
        Map.of("action", "job.discard", "_pglock_csrf", token));
    assertThat(with.statusCode()).as(with.body()).isEqualTo(303);
    assertThat(with.headers().firstValue("Location")).get().asString()
        .startsWith("/pglock/jobs/" + id).contains("done=job.discard");
    assertThat(state(app, id)).isEqualTo(JobState.DISCARDED);
    assertThat(actions(id)).containsExactly("anonymous job.discard refused", "anonymous job.discard done");
  }

  @Test
  void isOffUnlessEnabled() throws Exception {
    try (ConfigurableApplicationContext off = SpringFleet.startWeb(App.class, withoutSpringSecurity(), namespace,
        "dashboard-off-" + suffix)) {
      assertThat(off.getBeansOfType(Dashboard.class)).isEmpty();
      assertThat(new DashboardBrowser(SpringFleet.uri(off), null, null).get("/pglock/").statusCode())
          .isEqualTo(404);
    }
  }

  @Test
  void servesAtTheConfiguredPath() throws Exception {
    try (ConfigurableApplicationContext moved = SpringFleet.startWeb(App.class, withoutSpringSecurity(), namespace,
        "dashboard-moved-" + suffix, "pglock.dashboard.enabled=true", "pglock.dashboard.path=/admin/pglock")) {
      DashboardBrowser b = new DashboardBrowser(SpringFleet.uri(moved), null, null);
      HttpResponse<String> overview = b.get("/admin/pglock/");
      assertThat(overview.statusCode()).as(overview.body()).isEqualTo(200);
      assertThat(overview.body()).contains("Overview", "href=\"/admin/pglock/jobs");
      assertThat(b.get("/pglock/").statusCode()).isEqualTo(404);
    }
  }

  @Test
  void aBadPathFailsTheStartNamingTheProperty() {
    assertThatThrownBy(() -> SpringFleet.startWeb(App.class, withoutSpringSecurity(), namespace,
        "dashboard-bad-" + suffix, "pglock.dashboard.enabled=true", "pglock.dashboard.path=/pglock/").close())
        .rootCause().isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pglock.dashboard.path").hasMessageContaining("'/pglock/'");
  }

  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withClassLoader(withoutSpringSecurity())
      .withConfiguration(AutoConfigurations.of(PgLockAutoConfiguration.class, PgLockSchedulerAutoConfiguration.class,
          PgLockQueueAutoConfiguration.class, PgLockDashboardAutoConfiguration.class))
      .withUserConfiguration(AutoConfigurationTest.Pool.class)
      .withPropertyValues("pglock.namespace=" + namespace, "pglock.dashboard.enabled=true");

  @Test
  void badSettingsFailTheStartNamingTheProperty() {
    for (String path : List.of("pglock", "/", "/pglock/*", "/pglock/", "/a//b", "/pg lock")) {
      runner.withPropertyValues("pglock.dashboard.path=" + path).run(context -> assertThat(context).getFailure()
          .rootCause().isInstanceOf(IllegalArgumentException.class).hasMessageContaining("pglock.dashboard.path")
          .hasMessageContaining("'" + path + "'"));
    }
    runner.withPropertyValues("pglock.dashboard.csrf-secret=not base64!").run(context -> assertThat(context)
        .getFailure().rootCause().hasMessageContaining("pglock.dashboard.csrf-secret is not base64")
        .hasMessageNotContaining("not base64!"));
    runner.withPropertyValues("pglock.dashboard.csrf-secret=c2hvcnQ=").run(context -> assertThat(context)
        .getFailure().rootCause().hasMessageContaining("pglock.dashboard.csrf-secret is 5 bytes, at least 32"));
    runner.withPropertyValues("pglock.dashboard.refresh=500ms").run(context -> assertThat(context).getFailure()
        .rootCause().hasMessageContaining("pglock.dashboard.refresh"));
    runner.withPropertyValues("pglock.dashboard.query-timeout=10m").run(context -> assertThat(context).getFailure()
        .rootCause().hasMessageContaining("pglock.dashboard.query-timeout"));
    runner.withPropertyValues("pglock.dashboard.csrf-secret=" + "A".repeat(44), "pglock.dashboard.refresh=0s",
        "pglock.dashboard.query-timeout=30s", "pglock.dashboard.read-only=true")
        .run(context -> assertThat(context.getBean(Dashboard.class).readOnly()).isTrue());
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnDashboard {
    @Bean
    Dashboard myDashboard(DataSource dataSource) {
      return Dashboard.builder(dataSource).readOnly(true).build();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnAuthorizer {
    @Bean
    DashboardAuthorizer onlyOlga() {
      return (caller, action) -> caller.name().filter("olga"::equals).isPresent();
    }
  }

  @Test
  void backsOffAndStaysOffWhereItShould() {
    runner.withUserConfiguration(OwnDashboard.class).run(context -> {
      assertThat(context).hasSingleBean(Dashboard.class).hasBean("myDashboard");
      ServletRegistrationBean<?> servlet = context.getBean("pgLockDashboardServlet", ServletRegistrationBean.class);
      assertThat(servlet.getServlet()).isInstanceOf(DashboardServlet.class);
      assertThat(servlet.getUrlMappings()).containsExactly("/pglock/*");
    });
    runner.withUserConfiguration(OwnAuthorizer.class).run(context -> assertThat(context).hasNotFailed()
        .hasSingleBean(Dashboard.class));
    runner.withUserConfiguration(OwnAuthorizer.class).withPropertyValues("pglock.dashboard.role=OPS")
        .run(context -> assertThat(context).getFailure().rootCause().isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("pglock.dashboard.role=OPS").hasMessageContaining("DashboardAuthorizer"));
    runner.withPropertyValues("pglock.dashboard.enabled=false").run(context -> assertThat(context)
        .hasSingleBean(io.pglock.PgLocks.class).doesNotHaveBean(Dashboard.class)
        .doesNotHaveBean("pgLockDashboardServlet"));
    runner.withClassLoader(new FilteredClassLoader(Dashboard.class)).run(context -> assertThat(context)
        .hasNotFailed().doesNotHaveBean("pgLockDashboardServlet"));
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(PgLockAutoConfiguration.class, PgLockDashboardAutoConfiguration.class))
        .withUserConfiguration(AutoConfigurationTest.Pool.class)
        .withPropertyValues("pglock.namespace=" + namespace, "pglock.dashboard.enabled=true")
        .run(context -> assertThat(context).hasSingleBean(io.pglock.PgLocks.class).doesNotHaveBean(Dashboard.class));
  }

  /** Enqueues a job in a queue no worker takes, and remembers it for the clean-up. */
  static long enqueue(ConfigurableApplicationContext app, String queue, List<Long> jobs) {
    long id = app.getBean(JobQueue.class).enqueue(JobRequest.of("dashboard-test", Map.of("n", jobs.size()))
        .queue(queue)).id();
    jobs.add(id);
    return id;
  }

  static JobState state(ConfigurableApplicationContext app, long id) {
    return app.getBean(JobQueue.class).admin().job(id).orElseThrow().state();
  }

  /** {@return the dashboard's record of actions on a job, oldest first: "actor action outcome"} */
  static List<String> actions(long job) throws SQLException {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT actor || ' ' || action || ' ' || outcome"
            + " FROM pglock.dashboard_action WHERE target = ? ORDER BY id")) {
      ps.setString(1, "job " + job);
      List<String> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
      return out;
    }
  }

  static void deleteJobsAndTheirActions(String queue, List<Long> jobs) throws SQLException {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement deleteJobs = c.prepareStatement("DELETE FROM pglock.job WHERE queue = ?");
        PreparedStatement deleteActions = c.prepareStatement(
            "DELETE FROM pglock.dashboard_action WHERE target = ANY (?)")) {
      deleteJobs.setString(1, queue);
      deleteJobs.executeUpdate();
      deleteActions.setArray(1, c.createArrayOf("text", jobs.stream().map(id -> "job " + id).toArray()));
      deleteActions.executeUpdate();
    }
  }
}
