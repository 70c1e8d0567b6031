package io.pglock.micrometer;

import io.pglock.PgLockSchema;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/** What the module's database tests share: the schema, what a test opened, and deleting its rows. */
abstract class MetricsTestSupport {
  /** Closed by {@link #closeOpen()}, last opened first. */
  final List<AutoCloseable> open = new ArrayList<>();

  @BeforeAll
  static void schema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  /** Closes what the test opened, last first (workers before their queue, the queue before its PgLocks). */
  void closeOpen() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    open.clear();
  }

  /** Deletes the test's rows: each statement takes the test's key (a queue, a namespace) as its one parameter. */
  static void delete(String key, String... statements) throws SQLException {
    try (Connection c = TestDatabase.get().connect()) {
      for (String sql : statements) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          ps.setString(1, key);
          ps.execute();
        }
      }
    }
  }
}
