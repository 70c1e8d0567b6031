package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.testing.TestDatabase;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code pglock dashboard}: serves the pages from its own JVM, on loopback, and stops on SIGTERM. */
class DashboardCommandTest {
  private static final Pattern URL = Pattern.compile("pglock dashboard on (http://\\S+/)");

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @Test
  void servesThePagesOnLoopbackUntilStopped() throws Exception {
    try (PglockProcess p = PglockProcess.start("dashboard", "--port", "0")) {
      p.await("the dashboard's URL", Duration.ofSeconds(60), () -> URL.matcher(p.output()).find());
      Matcher m = URL.matcher(p.output());
      assertThat(m.find()).isTrue();
      URI uri = URI.create(m.group(1));
      assertThat(uri.getHost()).isEqualTo("127.0.0.1");
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
      for (String page : new String[] {"", "locks", "tasks", "queues", "jobs", "actions"}) {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri.resolve(page)).timeout(Duration.ofSeconds(60))
            .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(page + ": " + r.body()).isEqualTo(200);
        assertThat(r.body()).contains("<nav>");
      }
      assertThat(dashboardBackends()).as("the dashboard's pooled connections").isPositive();
      p.signal("TERM");
      assertThat(p.awaitExit(Duration.ofSeconds(60))).isEqualTo(128 + 15);
    }
  }

  @Test
  void anotherAddressNeedsReadOnlyOrAnExplicitChoice() {
    CliRun run = CliRun.onDatabase("dashboard", "--bind", "0.0.0.0", "--port", "0");
    assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(run.err()).contains("not loopback", "--read-only", "--allow-remote-actions");
  }

  @Test
  void aTakenPortIsABadOption() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      CliRun run = CliRun.onDatabase("dashboard", "--port", Integer.toString(taken.getLocalPort()));
      assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
      assertThat(run.err()).contains("cannot listen on 127.0.0.1:" + taken.getLocalPort(), "--port");
    }
  }

  @Test
  void aSchemaWithoutTheDashboardTableIsNamed() {
    CliRun run = CliRun.onDatabase("dashboard", "--port", "0", "--schema", "no_such_schema_here");
    assertThat(run.exitCode()).isEqualTo(ExitCodes.SCHEMA_MISSING);
    assertThat(run.err()).contains("no_such_schema_here", "version 12", "PgLockSchema.migrate");
  }

  /** Backends named pglock-dashboard: only this test starts a standalone dashboard. */
  private static int dashboardBackends() throws Exception {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity"
            + " WHERE application_name = 'pglock-dashboard' AND datname = current_database()")) {
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
