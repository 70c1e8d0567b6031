package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * {@code pglock jobs retry} says what its own statement did, even when a worker claims the job the
 * moment it is available again. Here a "worker" listening on the queue's channel claims the job as
 * soon as the retry's NOTIFY arrives (attempt 3 becomes 4). Before, the command read the job again
 * after the retry and printed "attempt 5 next"; it ran as attempt 3 of 3, so the retry allows a
 * 4th, and that is what it must say. The NOTIFY arriving also shows the workers are woken.
 */
class JobsRetryRaceTest {
  private final String queue = "cli-retry-race-" + UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @AfterEach
  void cleanUp() throws Exception {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("DELETE FROM pglock.job WHERE queue = ?")) {
      ps.setString(1, queue);
      ps.execute();
    }
  }

  @Test
  void retry_reportsTheAttemptItsUpdateMadeNext_notAWorkersClaimThatFollowed() throws Exception {
    long id;
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("INSERT INTO pglock.job (queue, kind, state, attempt, max_attempts,"
            + " finished_at) VALUES (?, 'send', 'discarded', 3, 3, now()) RETURNING id")) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        id = rs.getLong(1);
      }
    }
    CountDownLatch listening = new CountDownLatch(1);
    AtomicReference<String> heard = new AtomicReference<>();
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread worker = new Thread(() -> {
      try (Connection c = TestDatabase.get().connect(); Statement st = c.createStatement()) {
        c.setAutoCommit(true); // a LISTEN in an open transaction would not listen yet
        st.execute("LISTEN " + JobRetry.channel("pglock"));
        listening.countDown();
        PGConnection pg = c.unwrap(PGConnection.class);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (heard.get() == null && System.nanoTime() < deadline) {
          PGNotification[] ns = pg.getNotifications(1_000);
          if (ns != null && ns.length > 0) {
            st.executeUpdate("UPDATE pglock.job SET state = 'running', attempt = attempt + 1, started_at = now()"
                + " WHERE id = " + id);
            heard.set(ns[0].getParameter());
          }
        }
      } catch (Throwable e) {
        failed.set(e);
        listening.countDown();
      }
    }, "claiming-worker");
    worker.start();
    assertThat(listening.await(30, TimeUnit.SECONDS)).isTrue();

    TestDatabase db = TestDatabase.get();
    java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("jobs", "retry", Long.toString(id),
        "--url", db.jdbcUrl()));
    if (db.user() != null) {
      args.addAll(java.util.List.of("--user", db.user()));
    }
    if (db.password() != null) {
      args.addAll(java.util.List.of("--password", db.password()));
    }
    CliRun run = CliRun.of(args.toArray(String[]::new));
    worker.join(40_000);

    assertThat(failed.get()).isNull();
    assertThat(heard.get()).as("the workers NOTIFY; " + run.describe()).isEqualTo(queue + " 0 0");
    assertThat(run.exitCode()).as(run.describe()).isZero();
    assertThat(run.out()).isEqualTo("job " + id + ": retried: available now (queue " + queue + ", attempt 4 next of 4)"
        + System.lineSeparator());
  }
}
