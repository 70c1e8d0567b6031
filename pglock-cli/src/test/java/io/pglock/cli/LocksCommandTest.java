package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.LockHandle;
import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code pglock locks} against the test database: a lock a {@code PgLocks} of this test holds (by
 * name and node), a lock plain SQL holds (by its raw key), and a waiter under the lock it waits for.
 */
@ExtendWith(NoLeakedLocks.class)
class LocksCommandTest {
  private static final String NAMESPACE = "cli-locks-test";
  private static final Duration SHOWN = Duration.ofSeconds(15); // names are recorded within about a second

  private final String name = "locks-" + UUID.randomUUID();
  private final String node = "locks-test-" + ProcessHandle.current().pid();

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @Test
  void locks_showsANamedHolderBySqlAndNode_aRawSqlLockByKey_andAWaiterUnderItsLock() throws Exception {
    long rawKey = ThreadLocalRandom.current().nextLong();
    try (PgLocks locks = pgLocks(); Connection raw = TestDatabase.get().connect();
        Connection waiter = TestDatabase.get().connect()) {
      LockHandle held = locks.lock(name).acquire(Duration.ofSeconds(10));
      CompletableFuture<Void> waiting;
      try {
        execute(raw, "SELECT pg_advisory_lock(" + rawKey + ")");
        int waiterPid = pid(waiter); // now: the waiting connection cannot answer until it has the lock
        long key = locks.lock(name).key().int64();
        waiting = CompletableFuture.runAsync(() -> execute(waiter, "SELECT pg_advisory_lock(" + key + ")"));
        String lock = NAMESPACE + ":" + name;

        CliRun run = CliRun.awaitOnDatabase(SHOWN, r -> r.rows(lock).size() == 2, "locks");

        assertThat(run.exitCode()).as(run.describe()).isZero();
        int holderPid = lockSessionPid();
        List<String> lines = run.out().lines().toList();
        int holderLine = lines.indexOf(lines.stream().filter(l -> l.startsWith(lock + " ")).findFirst().orElseThrow());
        assertThat(lines.get(holderLine + 1)).as("the waiter, right under its lock, indented").startsWith("  " + lock + " ");
        assertThat(run.rows(lock)).as(run.describe()).containsExactly(
            List.of(lock, "exclusive", "held", Integer.toString(holderPid), node, "lock-0" + address(holderPid),
                "session", run.rows(lock).get(0).get(7)),
            List.of(lock, "exclusive", "waiting", Integer.toString(waiterPid), "-",
                // Waiting inside a statement, so inside a transaction: the view cannot tell the scope.
                TestDatabase.TEST_APPLICATION_NAME + address(waiterPid), "session/xact", run.rows(lock).get(1).get(7),
                Integer.toString(holderPid)));
        assertThat(run.rows(lock).get(0).get(7)).as("the holder's age").matches("\\d+s|\\d+m\\d\\ds");
        assertThat(run.rows(Long.toString(rawKey))).as(run.describe()).singleElement()
            .satisfies(r -> assertThat(r.subList(0, 6)).containsExactly(Long.toString(rawKey), "exclusive", "held",
                Integer.toString(pid(raw)), "-", TestDatabase.TEST_APPLICATION_NAME + address(pid(raw))));
      } finally {
        held.close();
        execute(raw, "SELECT pg_advisory_unlock_all()");
      }
      waiting.get(10, TimeUnit.SECONDS); // the waiter got the lock once the holder let go
      execute(waiter, "SELECT pg_advisory_unlock_all()");
    }
  }

  @Test
  void locks_namespaceAndNameFilters_showOnlyMatchingLocks() throws Exception {
    try (PgLocks locks = pgLocks(); LockHandle held = locks.lock(name).acquire(Duration.ofSeconds(10))) {
      String lock = NAMESPACE + ":" + name;
      CliRun matching = CliRun.awaitOnDatabase(SHOWN, r -> r.rows(lock).size() == 1,
          "locks", "--namespace", NAMESPACE, "--name", "locks-" + name.substring(6, 14) + "*");

      CliRun otherNamespace = CliRun.onDatabase("locks", "--namespace", "cli-locks-test-other");
      CliRun otherName = CliRun.onDatabase("locks", "--namespace", NAMESPACE, "--name", name + "?");

      assertThat(matching.out().lines()).as(matching.describe())
          .allMatch(l -> l.startsWith("LOCK ") || l.startsWith(NAMESPACE + ":") || l.matches("\\d+ held, \\d+ waiting"));
      assertThat(otherNamespace.out()).doesNotContain(name)
          .startsWith("no advisory locks held or awaited in namespace cli-locks-test-other");
      assertThat(otherName.out()).doesNotContain(lock + " ");
      assertThat(otherNamespace.exitCode()).isZero();
    }
  }

  @Test
  void locks_watchWithCount_redrawsThatManyTimes_atTheInterval_withASeparatorWhenNotATerminal() {
    long start = System.nanoTime();
    CliRun run = CliRun.onDatabase("locks", "--watch", "150ms", "--count", "3", "--namespace", NAMESPACE);
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(run.exitCode()).as(run.describe()).isZero();
    assertThat(run.out().lines().filter(l -> l.startsWith("--- pglock locks, every 150ms, 20"))).hasSize(3);
    assertThat(run.out()).doesNotContain("\033[");
    assertThat(took).as("two pauses of 150 ms between three refreshes").isGreaterThanOrEqualTo(Duration.ofMillis(300));
  }

  @Test
  void locks_schemaMissing_exitsWithTheSchemaMissingCode_inOneLineNamingTheFix() {
    CliRun run = CliRun.onDatabase("locks", "--schema", "nope");

    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.SCHEMA_MISSING).isEqualTo(5);
    assertThat(run.err().lines()).singleElement().asString().startsWith("pglock locks: the view nope.locks is missing")
        .contains("PgLockSchema.migrate(dataSource, \"nope\")");
  }

  @Test
  void locks_badOptions_areUsageErrors() {
    assertThat(CliRun.onDatabase("locks", "--schema", "Nope").exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(CliRun.onDatabase("locks", "--count", "2").err()).startsWith("pglock locks: --count needs --watch");
    assertThat(CliRun.onDatabase("locks", "--watch", "10ms").err())
        .startsWith("pglock locks: --watch interval must be between 100ms and 1h: 10ms");
    assertThat(CliRun.onDatabase("locks", "--namespace", "a:b").exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(CliRun.onDatabase("locks", "--namespace", "x", "--all-namespaces").err())
        .startsWith("pglock locks: --namespace and --all-namespaces exclude each other");
  }

  @Test
  void locks_help_showsAnExampleAndTheExitCodes() {
    CliRun run = CliRun.of("locks", "--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("pglock locks --watch 5s").containsPattern("\n  5 +pglock's schema");
  }

  private PgLocks pgLocks() {
    return PgLocks.builder(TestDatabase.get().dataSource()).namespace(NAMESPACE).nodeName(node).build();
  }

  /** The pid of this test's lock session, found by its application_name (pglock:node:lock-0:namespace). */
  private int lockSessionPid() throws SQLException {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT pid FROM pg_stat_activity WHERE application_name = ?")) {
      ps.setString(1, "pglock:" + node + ":lock-0:" + NAMESPACE);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("the lock session of " + node).isTrue();
        return rs.getInt(1);
      }
    }
  }

  /** " (address)" as the table shows a backend's client address, or "" over a Unix socket. */
  private static String address(int pid) throws SQLException {
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("SELECT host(client_addr) FROM pg_stat_activity WHERE pid = ?")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        String a = rs.getString(1);
        return a == null ? "" : " (" + a + ")";
      }
    }
  }

  private static int pid(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()"); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static void execute(Connection c, String sql) {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.execute();
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }
}
