package io.pglock.queue;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * A queue of its own per test (a random queue name, so rows of other tests never meet), its
 * PgLocks, and clean-up of what the test opened and inserted.
 */
final class QueueFixture implements AutoCloseable {
  final String queue = "q-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<AutoCloseable> open = new ArrayList<>();

  static {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  PgLocks locks(String node) {
    return locks(node, Duration.ofSeconds(30));
  }

  PgLocks locks(String node, Duration lease) {
    PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).namespace("queue-test").nodeName(node)
        .lease(lease).build();
    open.add(locks);
    return locks;
  }

  JobQueue jobs(String node) {
    JobQueue jobs = JobQueue.builder(locks(node)).build();
    open.add(jobs);
    return jobs;
  }

  <T extends AutoCloseable> T closeLater(T c) {
    open.add(c);
    return c;
  }

  JobRequest job(String kind, Object payload) {
    return JobRequest.of(kind, payload).queue(queue);
  }

  /** Jobs of this test's queue matching a condition (SQL); unchecked, for condition waits. */
  long count(String where) {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pglock.job WHERE queue = ? AND " + where)) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The backend pids of a node's worker sessions (application_name pglock:<node>:jobs:...). */
  static List<Integer> workerPids(String node) {
    List<Integer> pids = new ArrayList<>();
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement(
            "SELECT pid FROM pg_stat_activity WHERE application_name LIKE ? AND datname = current_database()")) {
      ps.setString(1, "pglock:" + node + ":jobs:%");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          pids.add(rs.getInt(1));
        }
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
    return pids;
  }

  @Override
  public void close() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    open.clear();
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("DELETE FROM pglock.job WHERE queue = ?")) {
      ps.setString(1, queue);
      ps.execute();
    }
  }
}
