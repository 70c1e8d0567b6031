package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.testing.SqlClientProcess;
import io.pglock.testing.SqlClientProcess.Language;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Real clients of other languages (Python with psycopg2, Node with pg; clients/ at the repository's
 * root) against the Java library, through the SQL API only: their lock excludes the Java lock of the
 * same name and the other way round, and the failure they record is in the history. Skipped where
 * the client cannot run; .ci/run installs both.
 */
class SqlClientLockTest extends PgLocksTestSupport {
  private static final String NS = "sql-client-test";
  /** Generous: starting an interpreter on a busy 2-core machine takes seconds. */
  private static final Duration DEADLINE = Duration.ofSeconds(60);

  private final String name = "client-" + UUID.randomUUID();
  private final String app = "pglock-test-sql-client-" + UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @ParameterizedTest
  @EnumSource(Language.class)
  void clientHoldsTheLock_javaIsRefused_untilTheClientUnlocks(Language language) throws Exception {
    SqlClientProcess.assumeAvailable(language);
    PgLocks locks = track(PgLocks.builder(db().dataSource()).namespace(NS).build());
    try (SqlClientProcess client = SqlClientProcess.start(language, app, "pglock", "hold", NS, name)) {
      assertThat(client.awaitLine(DEADLINE)).isEqualTo("held");
      assertThat(holderApplications()).containsExactly(app);
      assertThat(locks.lock(name).tryAcquire()).as("Java's lock of the same name").isEmpty();
      client.send("release");
      assertThat(client.awaitLine(DEADLINE)).isEqualTo("released");
      client.awaitExit(DEADLINE);
    }
    try (LockHandle h = locks.lock(name).tryAcquire().orElseThrow()) {
      assertThat(h.isHeld()).isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(Language.class)
  void javaHoldsTheLock_theClientIsRefused_andGetsItOnceJavaReleases(Language language) throws Exception {
    SqlClientProcess.assumeAvailable(language);
    PgLocks locks = track(PgLocks.builder(db().dataSource()).namespace(NS).build());
    try (LockHandle h = locks.lock(name).tryAcquire().orElseThrow()) {
      assertThat(SqlClientProcess.run(language, DEADLINE, app, "pglock", "try", NS, name)).containsExactly("busy");
    }
    assertThat(SqlClientProcess.run(language, DEADLINE, app, "pglock", "try", NS, name)).containsExactly("granted");
  }

  @ParameterizedTest
  @EnumSource(Language.class)
  void clientRecordsAFailure_inTheLockHistory(Language language) throws Exception {
    SqlClientProcess.assumeAvailable(language);
    List<String> out = SqlClientProcess.run(language, DEADLINE, app, "pglock", "fail", NS, name, "disk full");
    assertThat(out).hasSize(1).allMatch(l -> l.matches("hold \\d+"));
    long id = Long.parseLong(out.get(0).substring("hold ".length()));
    try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(
        "SELECT namespace, name, node, outcome, error_class, error_message, error_stack FROM pglock.history WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        assertThat(List.of(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
            rs.getString(6))).containsExactly(NS, name, app, "failed",
                language == Language.PYTHON ? "RuntimeError" : "TypeError", "disk full");
        assertThat(rs.getString(7)).as("the client's stack").contains("disk full");
      }
    }
  }

  /** The application names of the backends holding the lock. */
  private List<String> holderApplications() throws Exception {
    try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(
        "SELECT application_name FROM pglock.locks WHERE key = pglock.key(?, ?) AND granted")) {
      ps.setString(1, NS);
      ps.setString(2, name);
      try (ResultSet rs = ps.executeQuery()) {
        List<String> apps = new java.util.ArrayList<>();
        while (rs.next()) {
          apps.add(rs.getString(1));
        }
        return apps;
      }
    }
  }
}
