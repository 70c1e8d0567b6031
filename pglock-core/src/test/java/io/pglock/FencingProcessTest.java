package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.process.ChildJvm;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Fencing tokens with real processes: a holder paused (SIGSTOP) past its lease whose late write the
 * resource refuses.
 */
class FencingProcessTest extends PgLocksTestSupport {
  /** Generous: a child JVM starts in about a second, slower on a busy machine. */
  private static final Duration CHILD_START = Duration.ofSeconds(60);
  private static final Duration LEASE = Duration.ofSeconds(2);

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
}
