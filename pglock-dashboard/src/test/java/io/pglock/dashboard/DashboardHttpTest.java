package io.pglock.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.testing.Await;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The pages over a real fleet, and the actions, through HTTP: what each shows and what each changes. */
class DashboardHttpTest {
  private static DashboardFleet fleet;
  private static DashboardServer server;
  private static Browserless http;

  @BeforeAll
  static void start() throws Exception {
    fleet = new DashboardFleet(); // assigned first: if populating fails, stop() still closes it
    fleet.populate();
    server = fleet.dashboard().build().serve(new InetSocketAddress("127.0.0.1", 0));
    http = new Browserless(server.uri());
  }

  @AfterAll
  static void stop() throws Exception {
    if (server != null) {
      server.close();
    }
    if (fleet != null) {
      fleet.close();
    }
  }

  @Test
  void everyPageShowsTheFleet() throws Exception {
    assertThat(page("/")).contains("alpha", "beta", "billing", DashboardFleet.QUEUE, "flaky");
    assertThat(page("/locks")).contains(fleet.namespace + " / inventory", "waiting");
    assertThat(page("/history?failed=1")).contains("audit ledger is unbalanced", "failed");
    assertThat(page("/elections")).contains("billing", "partitions", "p0", "p3");
    assertThat(page("/tasks")).contains(fleet.namespace + " / flaky", fleet.namespace + " / report");
    assertThat(page("/task?namespace=" + fleet.namespace + "&name=flaky")).contains("report server said 502", "<svg");
    assertThat(page("/queues")).contains(DashboardFleet.QUEUE, "<svg");
    assertThat(page("/jobs?state=discarded")).contains("customer 13 has no address");
    long seven = fleet.jobOf(7);
    assertThat(page("/jobs/" + seven)).contains("mail server busy", "\"customer\": 7");
    assertThat(page("/actions")).contains("Actions");
  }

  @Test
  void jobsFilterByPayloadKindAndState() throws Exception {
    String byJson = page("/jobs?payload=" + enc("{\"customer\": 7}"));
    assertThat(byJson).contains("/jobs/" + fleet.jobOf(7) + "\"").doesNotContain("/jobs/" + fleet.jobOf(99) + "\"");
    String byText = page("/jobs?payload=99");
    assertThat(byText).contains("/jobs/" + fleet.jobOf(99) + "\"");
    assertThat(page("/jobs?kind=nothing-like-it")).contains("No job matches.");
    assertThat(page("/jobs?state=available&queue=" + DashboardFleet.QUEUE)).contains("/jobs/" + fleet.jobOf(99) + "\"");
  }

  @Test
  void historyPagesFollowTheirCursorWithoutRepeatingARow() throws Exception {
    try (Connection c = TestDatabase.get().connect(); Statement s = c.createStatement()) {
      // 70 ended holds of a lock of its own, 5 in another namespace between them.
      s.execute("INSERT INTO " + fleet.schema + ".lock_history (id, namespace, name, key, node, pid, backend_start,"
          + " acquired_at, released_at, outcome) SELECT 900000 + g, CASE WHEN g % 15 = 0 THEN 'elsewhere' ELSE '"
          + fleet.namespace + "' END, 'paged', 1, 'gamma', 1, now(), now() - g * interval '1 minute',"
          + " now() - g * interval '1 minute' + interval '1 second', 'released' FROM generate_series(1, 75) g");
    }
    java.util.Set<String> seen = new java.util.HashSet<>();
    String path = "/history?namespace=" + fleet.namespace;
    for (int pages = 0; path != null && pages < 10; pages++) {
      String body = page(path);
      java.util.regex.Matcher rows = java.util.regex.Pattern.compile("<td>" + java.util.regex.Pattern.quote(
          fleet.namespace) + " / paged</td><td>gamma</td><td class=\"num\">1</td><td[^>]*>([^<]+)</td>").matcher(body);
      while (rows.find()) {
        assertThat(seen.add(rows.group(1))).as("a row shown twice: " + rows.group(1)).isTrue();
      }
      assertThat(body).doesNotContain("elsewhere / paged");
      java.util.regex.Matcher next = java.util.regex.Pattern.compile("class=\"next\" href=\"([^\"]+)\"").matcher(body);
      path = next.find() ? next.group(1).replace("&amp;", "&") : null;
    }
    assertThat(seen).hasSize(70);
  }

  @Test
  void badInputIsAClearError() throws Exception {
    HttpResponse<String> state = http.get("/jobs?state=bogus");
    assertThat(state.statusCode()).isEqualTo(400);
    assertThat(state.body()).contains("state 'bogus' is not a job state");
    assertThat(http.get("/jobs/abc").statusCode()).isEqualTo(400);
    assertThat(http.get("/jobs/999999999").statusCode()).isEqualTo(404);
    assertThat(http.get("/no-such-page").statusCode()).isEqualTo(404);
    assertThat(http.get("/jobs?payload=" + enc("{not json")).statusCode()).isEqualTo(503);
  }

  @Test
  void pagesForbidFramingAndInlineScript() throws Exception {
    HttpResponse<String> r = http.get("/");
    assertThat(r.headers().firstValue("Content-Security-Policy")).get().asString()
        .contains("default-src 'self'", "frame-ancestors 'none'");
    assertThat(r.headers().firstValue("X-Frame-Options")).hasValue("DENY");
    assertThat(r.body()).doesNotContain("<script>").doesNotContain("onclick");
  }

  @Test
  void retryingADiscardedJobRunsItAgainAndIsRecorded() throws Exception {
    long id = fleet.jobOf(13);
    HttpResponse<String> r = http.post("/jobs/" + id, "/jobs/" + id, Map.of("action", "job.retry"));
    assertThat(r.statusCode()).isEqualTo(303);
    assertThat(r.headers().firstValue("Location")).get().asString().contains("/jobs/" + id, "done=job.retry", "n=1");
    Await.until("the retried job is attempted again", Duration.ofSeconds(60),
        () -> fleet.count("SELECT attempt FROM " + fleet.schema + ".job WHERE id = " + id) >= 2);
    assertThat(fleet.count("SELECT count(*) FROM " + fleet.schema + ".dashboard_action WHERE action = 'job.retry'"
        + " AND target = 'job " + id + "' AND outcome = 'done' AND affected = 1")).isEqualTo(1);
  }

  @Test
  void aPostWithoutTheTokenChangesNothing() throws Exception {
    long id = fleet.jobOf(99);
    HttpResponse<String> r = http.postRaw("/jobs/" + id, Map.of("action", "job.discard"));
    assertThat(r.statusCode()).isEqualTo(403);
    assertThat(r.body()).contains("anti-forgery");
    assertThat(fleet.text("SELECT state FROM " + fleet.schema + ".job WHERE id = ?", id)).isEqualTo("available");
    HttpResponse<String> forged = http.postRaw("/jobs/" + id, Map.of("action", "job.discard",
        "_pglock_csrf", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
    assertThat(forged.statusCode()).isEqualTo(403);
    assertThat(fleet.text("SELECT state FROM " + fleet.schema + ".job WHERE id = ?", id)).isEqualTo("available");
    assertThat(fleet.count("SELECT count(*) FROM " + fleet.schema + ".dashboard_action WHERE target = 'job " + id
        + "' AND outcome = 'refused'")).isGreaterThanOrEqualTo(2);
  }

  @Test
  void pausingResumingAndTriggeringATask() throws Exception {
    String task = "/task?namespace=" + fleet.namespace + "&name=report";
    Map<String, String> fields = Map.of("namespace", fleet.namespace, "name", "report");
    assertThat(http.post(task, "/task", with(fields, "task.pause")).statusCode()).isEqualTo(303);
    assertThat(fleet.text("SELECT paused::text FROM " + fleet.schema + ".scheduled_task WHERE name = ?", "report"))
        .isEqualTo("true");
    assertThat(page(task)).contains("paused", "Resume");
    assertThat(http.post(task, "/task", with(fields, "task.resume")).statusCode()).isEqualTo(303);
    assertThat(fleet.text("SELECT paused::text FROM " + fleet.schema + ".scheduled_task WHERE name = ?", "report"))
        .isEqualTo("false");
    assertThat(http.post(task, "/task", with(fields, "task.trigger")).statusCode()).isEqualTo(303);
    Await.until("the triggered run happens", Duration.ofSeconds(60), () -> fleet.count("SELECT count(*) FROM "
        + fleet.schema + ".task_run WHERE task = 'report' AND kind = 'manual'") >= 1);
  }

  @Test
  void bulkDeleteOfAFilterDeletesWhatItMatches() throws Exception {
    long before = fleet.count("SELECT count(*) FROM " + fleet.schema + ".job WHERE state = 'succeeded'");
    assertThat(before).isGreaterThan(0);
    HttpResponse<String> r = http.post("/jobs?state=succeeded", "/jobs/bulk",
        Map.of("action", "job.delete", "state", "succeeded", "queue", DashboardFleet.QUEUE, "kind", "send"));
    assertThat(r.statusCode()).isEqualTo(303);
    assertThat(fleet.count("SELECT count(*) FROM " + fleet.schema + ".job WHERE state = 'succeeded'"
        + " AND created_at < now() - interval '1 second'")).isZero();
    HttpResponse<String> noState = http.post("/jobs?state=succeeded", "/jobs/bulk", Map.of("action", "job.delete"));
    assertThat(noState.statusCode()).isEqualTo(400);
    assertThat(noState.body()).contains("needs the state filter");
  }

  @Test
  void aReadOnlyDashboardShowsNoActionAndRefusesThem() throws Exception {
    String page = discardRefusedBy(fleet.dashboard().readOnly(true), "read-only");
    assertThat(page).contains("read-only").doesNotContain("value=\"job.cancel\"");
  }

  @Test
  void theAuthorizerDecides() throws Exception {
    DashboardAuthorizer onlyCancel = (caller, action) -> action == DashboardAction.JOB_CANCEL;
    String page = discardRefusedBy(fleet.dashboard().authorizer(onlyCancel), "anonymous may not job.discard");
    assertThat(page).contains("value=\"job.cancel\"");
  }

  /**
   * Serves a dashboard, checks that a waiting job's page offers no discard, that a discard posted
   * with a valid token is refused with a message, and that the job is unchanged.
   *
   * @return the job's page as the dashboard served it
   */
  private static String discardRefusedBy(DashboardBuilder dashboard, String why) throws Exception {
    try (DashboardServer s = dashboard.build().serve(new InetSocketAddress("127.0.0.1", 0))) {
      Browserless client = new Browserless(s.uri());
      long id = fleet.jobOf(99);
      String page = client.get("/jobs/" + id).body();
      assertThat(page).doesNotContain("value=\"job.discard\"");
      HttpResponse<String> r = client.post("/jobs/" + id, "/jobs/" + id, Map.of("action", "job.discard"));
      assertThat(r.statusCode()).isEqualTo(403);
      assertThat(r.body()).contains(why);
      assertThat(fleet.text("SELECT state FROM " + fleet.schema + ".job WHERE id = ?", id)).isEqualTo("available");
      return page;
    }
  }

  @Test
  void aPageBlockedInTheDatabaseAnswersWithinItsTimeout() throws Exception {
    try (Connection blocker = TestDatabase.get().connect();
        DashboardServer s = fleet.dashboard().queryTimeout(Duration.ofSeconds(1)).build()
            .serve(new InetSocketAddress("127.0.0.1", 0))) {
      blocker.setAutoCommit(false);
      try (Statement st = blocker.createStatement()) {
        st.execute("LOCK TABLE " + fleet.schema + ".job IN ACCESS EXCLUSIVE MODE");
        long start = System.nanoTime();
        HttpResponse<String> r = new Browserless(s.uri()).get("/jobs");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.body()).contains("The database did not answer", "57014");
        // The bound is the timeout plus 1 s; the margin is for a saturated machine, and the point is
        // that the page answers at all while the table stays locked.
        assertThat(took).isLessThan(Duration.ofSeconds(15));
      } finally {
        blocker.rollback();
      }
    }
  }

  private static Map<String, String> with(Map<String, String> fields, String action) {
    java.util.Map<String, String> m = new java.util.LinkedHashMap<>(fields);
    m.put("action", action);
    return m;
  }

  private static String page(String path) throws Exception {
    HttpResponse<String> r = http.get(path);
    assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
    return r.body();
  }

  private static String enc(String s) {
    return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8);
  }
}
