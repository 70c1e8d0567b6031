package io.pglock.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobRequest;
import io.pglock.testing.PrivateServer;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * An action the page reported done survives a crash of the server right after, with its record,
 * on a server of the test's own that commits lazily ({@code synchronous_commit = off}, a WAL
 * writer that flushes every 10 s) and is stopped with {@code pg_ctl stop -m immediate}.
 */
class DashboardDurabilityTest {
  private static final String[] LOSSY = {"synchronous_commit=off", "wal_writer_delay=10s", "autovacuum=off"};

  @Test
  void aDiscardReportedDoneIsOnDiskWithItsRecord() throws Exception {
    PrivateServer server;
    try {
      server = PrivateServer.start(LOSSY);
    } catch (PrivateServer.Unavailable e) {
      assumeTrue(false, "no private PostgreSQL server here: " + e.getMessage());
      return;
    }
    try (server) {
      DataSource ds = server.dataSource("pglock-dashboard-durability-test");
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
      long id;
      try (PgLocks locks = PgLocks.builder(ds).namespace("durable").nodeName("durable")
          .connectTimeout(Duration.ofSeconds(30)).build();
          JobQueue jobs = JobQueue.builder(locks).build()) {
        id = jobs.enqueue(JobRequest.of("work", null).queue("durable").delay(Duration.ofHours(1))).id();
      }
      query(ds, "CHECKPOINT"); // the job row on disk: only the discard and its record are at stake
      try (DashboardServer dashboard = Dashboard.builder(ds).build().serve(new InetSocketAddress("127.0.0.1", 0))) {
        HttpResponse<String> r = new Browserless(dashboard.uri()).post("/jobs/" + id, "/jobs/" + id,
            Map.of("action", "job.discard"));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(303);
      }
      server.stopImmediate(); // right after the page said done
      server.startServer();
      assertThat(query(ds, "SELECT state FROM pglock.job WHERE id = " + id)).isEqualTo("discarded");
      assertThat(query(ds, "SELECT outcome || ' ' || affected FROM pglock.dashboard_action"
          + " WHERE action = 'job.discard' AND target = 'job " + id + "'")).isEqualTo("done 1");
    }
  }

  /** The first column of the first row, or null. */
  private static String query(DataSource ds, String sql) throws Exception {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      if (!ps.execute()) {
        return null;
      }
      try (ResultSet rs = ps.getResultSet()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }
}
