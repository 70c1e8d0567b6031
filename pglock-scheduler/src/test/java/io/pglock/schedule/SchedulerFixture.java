package io.pglock.schedule;

import io.pglock.PgLockSchema;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;

/** What the scheduler tests share: the schema, and the clean-up of a test's nodes and rows. */
public final class SchedulerFixture {
  private SchedulerFixture() {}

  /** Migrates the test database's schema (idempotent). */
  public static void schema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  /**
   * Closes what the test opened, last first, then deletes the namespace's tasks and runs, so that
   * tests never meet.
   */
  static void closeAndDelete(List<AutoCloseable> open, String namespace) throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    open.clear();
    deleteRows(namespace);
  }

  /** Deletes the namespace's tasks and runs, so that tests never meet. */
  public static void deleteRows(String namespace) throws java.sql.SQLException {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement a = c.prepareStatement("DELETE FROM pglock.task_run WHERE namespace = ?");
        PreparedStatement b = c.prepareStatement("DELETE FROM pglock.scheduled_task WHERE namespace = ?")) {
      a.setString(1, namespace);
      a.execute();
      b.setString(1, namespace);
      b.execute();
    }
  }
}
