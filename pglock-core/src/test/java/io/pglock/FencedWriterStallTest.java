package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.fault.TcpProxy;
import io.pglock.process.ChildJvm;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A fenced writer that stops between {@code check_fencing_token} and its commit keeps the lock's
 * row in {@code pglock.fencing_token} locked, so the successor's check waits for it: until the
 * writer's connection dies. {@code idle_in_transaction_session_timeout} on the writer's connection
 * bounds that wait, for a writer paused (SIGSTOP of a child JVM) and for one cut off silently (a
 * frozen proxy: no byte either way, no FIN, no RST); without it the wait outlasts the bound. The
 * stalled writer's commit then fails and its token is refused. docs/fencing.md states it.
 */
class FencedWriterStallTest extends PgLocksTestSupport {
  private static final Duration CHILD_START = Duration.ofSeconds(60);
  /** The writer's idle_in_transaction_session_timeout. */
  private static final Duration IDLE_IN_TX = Duration.ofSeconds(3);
  /** Room for a loaded machine between the server's timer and the successor's commit. */
  private static final Duration MARGIN = Duration.ofSeconds(5);

  private final String name = "stall-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<ChildJvm> children = new ArrayList<>();

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @AfterEach
  void killChildren() {
    children.forEach(ChildJvm::close);
    children.clear();
  }

  /** Two grants of the lock, in order: the stalled writer's token and its successor's. */
  private long[] twoTokens() throws Exception {
    PgLocks locks = track(builder().fencing().build());
    long[] tokens = new long[2];
    for (int i = 0; i < 2; i++) {
      try (LockHandle h = locks.lock(name).acquire(Duration.ofSeconds(30))) {
        tokens[i] = h.fencingToken();
      }
    }
    assertThat(tokens[1]).isGreaterThan(tokens[0]);
    return tokens;
  }

  /** The fencing check of the test's lock, in the connection's transaction. */
  private void check(Connection c, long token) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pglock.check_fencing_token(?, ?, ?)")) {
      ps.setString(1, "test");
      ps.setString(2, name);
      ps.setLong(3, token);
      ps.execute();
    }
  }

  /** The successor's fenced write (check, commit); statement_timeout bounds the test. Returns its duration. */
  private long successorWrite(long token, Duration statementTimeout) throws Exception {
    Connection c = connect();
    c.setAutoCommit(false);
    try (PreparedStatement ps = c.prepareStatement("SELECT set_config('statement_timeout', ?, true)")) {
      ps.setString(1, Long.toString(statementTimeout.toMillis()));
      ps.execute();
    }
    long start = System.nanoTime();
    try {
      check(c, token);
      c.commit();
    } catch (SQLException e) {
      c.rollback();
      throw e;
    }
    return System.nanoTime() - start;
  }

  /** Whether the lock's newest token still lets this one through (it must not, once a newer one wrote). */
  private boolean accepted(long token) throws SQLException {
    try (Connection c = db().connect();
        PreparedStatement ps = c.prepareStatement("SELECT pglock.accept_fencing_token(?, ?, ?)")) {
      ps.setString(1, "test");
      ps.setString(2, name);
      ps.setLong(3, token);
      try (var rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  private ChildJvm stalledWriter(long token, boolean withTimeout) throws Exception {
    List<String> opts = new ArrayList<>(List.of("namespace=test", "name=" + name, "token=" + token));
    if (withTimeout) {
      opts.add("idleInTxMs=" + IDLE_IN_TX.toMillis());
    }
    ChildJvm child = ChildJvm.start("stall-" + name, "stallwrite", opts.toArray(String[]::new));
    children.add(child);
    assertThat(child.awaitAnyLine(0, CHILD_START, "CHECKED", "CHECK_REJECTED")).isEqualTo("CHECKED");
    return child;
  }

  @Test
  void pausedWriter_betweenCheckAndCommit_holdsTheSuccessorBack_onlyUntilIdleInTransactionTimeout() throws Exception {
    long[] t = twoTokens();
    ChildJvm writer = stalledWriter(t[0], true);
    long checked = System.nanoTime();
    writer.signal("STOP");

    long waited = successorWrite(t[1], Duration.ofSeconds(60));
    long sinceCheck = System.nanoTime() - checked;

    System.out.printf("fenced writer paused between check and commit, idle_in_transaction_session_timeout %d ms:"
        + " the successor's write waited %d ms, done %d ms after the writer's check%n", IDLE_IN_TX.toMillis(),
        waited / 1_000_000, sinceCheck / 1_000_000);
    assertThat(Duration.ofNanos(waited)).as("the successor waited for the stalled writer's row lock")
        .isGreaterThan(IDLE_IN_TX.dividedBy(2));
    assertThat(Duration.ofNanos(sinceCheck)).as("the successor's write within the timeout, plus a margin")
        .isLessThan(IDLE_IN_TX.plus(MARGIN));

    writer.signal("CONT");
    int seen = writer.lineCount();
    writer.send("COMMIT");
    assertThat(writer.awaitAnyLine(seen, CHILD_START, "COMMIT_OK", "COMMIT_FAILED")).startsWith("COMMIT_FAILED");
    assertThat(accepted(t[0])).as("the stalled writer's token, once the successor wrote").isFalse();
  }

  @Test
  void pausedWriter_withoutTheTimeout_holdsTheSuccessorBack_pastThatBound_untilItsConnectionDies() throws Exception {
    long[] t = twoTokens();
    ChildJvm writer = stalledWriter(t[0], false);
    writer.signal("STOP");

    assertThatThrownBy(() -> successorWrite(t[1], IDLE_IN_TX.plus(MARGIN)))
        .as("still waiting for the paused writer after the bound").isInstanceOf(SQLException.class)
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("57014")); // statement_timeout

    writer.kill(); // its connection dies (the kernel closes the socket): the row lock goes with it
    long waited = successorWrite(t[1], Duration.ofSeconds(60));
    assertThat(Duration.ofNanos(waited)).isLessThan(MARGIN.multipliedBy(2));
  }

  @Test
  void cutOffWriter_betweenCheckAndCommit_holdsTheSuccessorBack_onlyUntilIdleInTransactionTimeout() throws Exception {
    long[] t = twoTokens();
    TcpProxy proxy = proxyToDb();
    PGSimpleDataSource ds = through(proxy, "pglock-test-stalled-writer");
    ds.setOptions("-c idle_in_transaction_session_timeout=" + IDLE_IN_TX.toMillis());
    Connection writer = track(ds.getConnection());
    writer.setAutoCommit(false);
    check(writer, t[0]);
    long checked = System.nanoTime();
    proxy.freeze(); // silent: no byte either way, no FIN, no RST

    long waited = successorWrite(t[1], Duration.ofSeconds(60));
    long sinceCheck = System.nanoTime() - checked;

    System.out.printf("fenced writer cut off between check and commit, idle_in_transaction_session_timeout %d ms:"
        + " the successor's write waited %d ms, done %d ms after the writer's check%n", IDLE_IN_TX.toMillis(),
        waited / 1_000_000, sinceCheck / 1_000_000);
    assertThat(Duration.ofNanos(waited)).as("the successor waited for the cut-off writer's row lock")
        .isGreaterThan(IDLE_IN_TX.dividedBy(2));
    assertThat(Duration.ofNanos(sinceCheck)).as("the successor's write within the timeout, plus a margin")
        .isLessThan(IDLE_IN_TX.plus(MARGIN));
    assertThat(accepted(t[0])).as("the cut-off writer's token, once the successor wrote").isFalse();
    proxy.thaw();
    assertThatThrownBy(writer::commit).as("the cut-off writer's commit").isInstanceOf(SQLException.class);
  }
}
