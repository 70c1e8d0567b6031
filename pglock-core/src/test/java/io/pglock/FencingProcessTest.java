package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.process.ChildJvm;
import io.pglock.testing.PrivateServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Fencing tokens with real processes: a holder paused (SIGSTOP) past its lease whose late write the
 * resource refuses, and tokens that keep increasing across an immediate restart (a crash) of a
 * PostgreSQL server the test starts itself.
 */
class FencingProcessTest extends PgLocksTestSupport {
  /** Generous: a child JVM starts in about a second, slower on a busy machine. */
  private static final Duration CHILD_START = Duration.ofSeconds(60);
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final long JUMP = 1L << 32;

  private final List<ChildJvm> children = new ArrayList<>();
  private final List<String> tables = new ArrayList<>();

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @AfterEach
  void killChildrenAndDropTables() throws SQLException {
    for (ChildJvm child : children) {
      child.close();
    }
    children.clear();
    try (Connection c = db().connect(); Statement st = c.createStatement()) {
      for (String table : tables) {
        st.execute("DROP TABLE IF EXISTS " + table);
      }
    }
    tables.clear();
  }

  @Test
  void pausedHolder_pastItsLease_writeIsRejectedByTheCheck_newerHoldersWriteStays() throws Exception {
    pausedHolderWritesLate("check");
  }

  @Test
  void pausedHolder_pastItsLease_conditionalUpdateChangesNoRow_newerHoldersWriteStays() throws Exception {
    pausedHolderWritesLate("conditional");
  }

  /**
   * A takes the lock with a token and is about to write when it is stopped; its lease runs out, the
   * server ends its session, B takes the lock (a larger token) and writes; A resumes and writes.
   */
  private void pausedHolderWritesLate(String style) throws Exception {
    String id = UUID.randomUUID().toString().substring(0, 8);
    String name = "fence-proc-" + id;
    String table = "fence_proc_" + id;
    LockKey key = LockKey.named("test", name);
    Connection c = connect();
    try (Statement st = c.createStatement()) {
      tables.add(table);
      st.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, v text NOT NULL, fencing_token bigint NOT NULL)");
      if (style.equals("conditional")) {
        st.execute("INSERT INTO " + table + " VALUES (1, 'initial', 0)");
      }
    }

    ChildJvm a = writer("a-" + id, name, table, style);
    long tokenA = token(a.awaitLine("ACQUIRED", CHILD_START));
    assertThat(serverHolders(c, key)).as("A holds the lock on the server").isEqualTo(1);
    a.signal("STOP"); // A has its token and its connection and is about to write

    ChildJvm b = writer("b-" + id, name, table, style);
    long tokenB = token(b.awaitLine("ACQUIRED", CHILD_START)); // granted once A's lease ran out
    assertThat(tokenB).as("B's token vs paused A's").isGreaterThan(tokenA);
    int seen = b.lineCount();
    b.send("WRITE");
    assertThat(b.awaitAnyLine(seen, Duration.ofSeconds(30), "WRITE_OK", "WRITE_REJECTED")).isEqualTo("WRITE_OK rows=1");

    a.signal("CONT");
    seen = a.lineCount();
    a.send("WRITE"); // A does not know it was paused and writes with its old token
    String outcome = a.awaitAnyLine(seen, Duration.ofSeconds(30), "WRITE_OK", "WRITE_REJECTED");
    if (style.equals("check")) {
      assertThat(outcome).startsWith("WRITE_REJECTED PGF01 ").contains("is stale");
    } else {
      assertThat(outcome).isEqualTo("WRITE_REJECTED rows=0");
    }
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT id, v, fencing_token FROM " + table + " ORDER BY id")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getInt(1)).isEqualTo(1);
      assertThat(rs.getString(2)).as("the row holds B's write").isEqualTo("fence-b-" + id);
      assertThat(rs.getLong(3)).isEqualTo(tokenB);
      assertThat(rs.next()).as("one row only").isFalse();
    }

    for (ChildJvm child : List.of(a, b)) {
      child.send("EXIT");
      assertThat(child.awaitExit(Duration.ofSeconds(30))).as(child.output()).isZero();
    }
    assertThat(serverHolders(c, key)).as("no one holds the lock after both exit").isZero();
  }

  private ChildJvm writer(String label, String name, String table, String style) throws Exception {
    ChildJvm child = ChildJvm.start("fence-" + label, "fencedwrite", "namespace=test", "node=fence-" + label,
        "name=" + name, "leaseMs=" + LEASE.toMillis(), "table=" + table, "id=1", "style=" + style);
    children.add(child);
    return child;
  }

  private static long token(String acquiredLine) {
    return Long.parseLong(acquiredLine.split(" ")[1]);
  }

  /**
   * Settings of the private server that make the crash lose what was committed asynchronously: the
   * WAL writer writes asynchronous commits every 10 s (not every 200 ms), and autovacuum, whose
   * synchronous commits would flush them, is off. A crash a moment after a grant so loses it (unless
   * the WAL writer's 10 s tick falls in that moment).
   */
  private static final String[] LOSSY = {"wal_writer_delay=10s", "autovacuum=off"};

  private static PrivateServer privateServer() throws Exception {
    try {
      return PrivateServer.start(LOSSY);
    } catch (PrivateServer.Unavailable e) {
      assumeTrue(false, "cannot start a PostgreSQL server of this test's own: " + e.getMessage());
      throw new AssertionError("unreachable");
    }
  }

  /**
   * The documented case: the sequence is on disk (a checkpoint after the first grant), further
   * grants commit asynchronously and may be lost in the crash; the first grant after the restart jumps
   * by 2^32 over what survived, above every token handed out before.
   */
  @Test
  void tokensKeepIncreasing_acrossAnImmediateServerRestart() throws Exception {
    try (PrivateServer pg = privateServer()) {
      DataSource ds = pg.dataSource("pglock-test-restart");
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
      String name = "restart-token";
      List<Long> before = new ArrayList<>();
      Timestamp firstStart = postmasterStart(ds);
      try (PgLocks locks = PgLocks.builder(ds).namespace("test").fencing().build()) {
        grant(locks, name, before);
        execute(ds, "CHECKPOINT"); // the row, with token 1, is on disk
        for (int i = 0; i < 4; i++) {
          grant(locks, name, before);
        }
        LockHandle held = locks.lock(name).acquire(Duration.ofSeconds(30)); // held when the server goes down
        before.add(held.fencingToken());
        assertThat(before).as("a new cluster's first tokens").containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
        pg.stopImmediate();
        await("the holder learns that its session is gone", Duration.ofSeconds(30), () -> !held.isHeld());
      }
      pg.startServer();
      assertThat(postmasterStart(ds)).as("pg_postmaster_start_time() after the restart").isAfter(firstStart);

      long last = before.get(before.size() - 1);
      long survived = sequenceValue(ds);
      System.out.printf("restart: tokens before %s; the sequence was at %d after the crash%n", before, survived);
      try (PgLocks again = PgLocks.builder(ds).namespace("test").fencing().build()) {
        List<Long> after = new ArrayList<>();
        grant(again, name, after);
        grant(again, name, after);
        System.out.printf("restart: tokens after the restart %s%n", after);
        assertThat(after.get(0)).as("the first grant after the restart vs every earlier token").isGreaterThan(last);
        assertThat(after.get(0)).as("one jump of 2^32 over what the sequence kept").isEqualTo(survived + JUMP + 1);
        assertThat(after.get(1)).as("no second jump under the same server start").isEqualTo(after.get(0) + 1);
      }
    }
  }

  /**
   * Regression (schema version 2 lost a new lock's row in a crash and started it again at 1): the
   * grants of a lock new just before a crash, all committed asynchronously, are followed by larger
   * tokens after the restart.
   */
  @Test
  void tokensOfALockNewBeforeTheCrash_keepIncreasingAfterIt() throws Exception {
    try (PrivateServer pg = privateServer()) {
      DataSource ds = pg.dataSource("pglock-test-restart");
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
      String name = "new-before-crash";
      List<Long> before = new ArrayList<>();
      try (PgLocks locks = PgLocks.builder(ds).namespace("test").fencing().build()) {
        for (int i = 0; i < 3; i++) {
          grant(locks, name, before);
        }
        pg.stopImmediate();
      }
      pg.startServer();
      try (PgLocks again = PgLocks.builder(ds).namespace("test").fencing().build()) {
        List<Long> after = new ArrayList<>();
        grant(again, name, after);
        System.out.printf("new lock, crash: tokens before %s, after the restart %s%n", before, after);
        assertThat(after.get(0)).as("first token after the restart vs the tokens %s granted before", before)
            .isGreaterThan(before.get(before.size() - 1));
      }
    }
  }

  /**
   * Regression (schema version 2 committed the jump after a restart asynchronously, so a second crash
   * handed the same token out again): two crashes in a row, tokens strictly increasing throughout.
   */
  @Test
  void twoCrashesInARow_tokensStrictlyIncreasing() throws Exception {
    try (PrivateServer pg = privateServer()) {
      DataSource ds = pg.dataSource("pglock-test-restart");
      PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);
      String name = "two-crashes";
      List<Long> tokens = new ArrayList<>();
      try (PgLocks locks = PgLocks.builder(ds).namespace("test").fencing().build()) {
        grant(locks, name, tokens);
        execute(ds, "CHECKPOINT"); // token 1 is on disk
        pg.stopImmediate();
      }
      for (int crash = 0; crash < 2; crash++) {
        pg.startServer();
        try (PgLocks locks = PgLocks.builder(ds).namespace("test").fencing().build()) {
          grant(locks, name, tokens);
          pg.stopImmediate(); // a moment after the grant after the restart
        }
      }
      pg.startServer();
      try (PgLocks locks = PgLocks.builder(ds).namespace("test").fencing().build()) {
        grant(locks, name, tokens);
      }
      System.out.printf("two crashes: tokens %s%n", tokens);
      for (int i = 1; i < tokens.size(); i++) {
        assertThat(tokens.get(i)).as("token %d of %s vs the one before", i, tokens).isGreaterThan(tokens.get(i - 1));
      }
    }
  }

  private static void grant(PgLocks locks, String name, List<Long> tokens) throws InterruptedException {
    try (LockHandle h = locks.lock(name).acquire(Duration.ofSeconds(30))) {
      tokens.add(h.fencingToken());
    }
  }

  /** Where the token sequence stands (as recovered after a crash: it may have lost advances). */
  private static long sequenceValue(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
        "SELECT last_value FROM pglock.fencing_token_seq"); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void execute(DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private static Timestamp postmasterStart(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_postmaster_start_time()")) {
      rs.next();
      return rs.getTimestamp(1);
    }
  }
}
