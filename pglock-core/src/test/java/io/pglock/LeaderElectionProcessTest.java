package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.election.Leader;
import io.pglock.election.LeaderElection;
import io.pglock.process.ChildJvm;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Three JVMs in one election; the leader is killed (SIGKILL) again and again, and a fresh JVM joins
 * each time. The children print {@code ELECTED <token> <t>} and {@code REVOKED <reason> <token> <t>},
 * {@code t} from {@link System#nanoTime()} (CLOCK_MONOTONIC: comparable between JVMs on one machine).
 */
class LeaderElectionProcessTest extends PgLocksTestSupport {
  private static final Duration CHILD_START = Duration.ofSeconds(60);
  private static final int KILLS = 5;
  /** Rounds of each of the other fault kinds. */
  private static final int ROUNDS = 3;
  /** The lease of the children in the pause, termination and shutdown tests: short, to keep them fast. */
  private static final Duration SHORT_LEASE = Duration.ofSeconds(2);

  private final List<ChildJvm> children = new ArrayList<>();
  private final Map<ChildJvm, String> nodes = new HashMap<>();
  private final String election = "proc-" + UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  static void schema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @AfterEach
  void killChildren() {
    for (ChildJvm child : children) {
      child.close();
    }
    children.clear();
    nodes.clear();
  }

  private ChildJvm join() throws Exception {
    return join(PgLocksBuilder.DEFAULT_LEASE);
  }

  private ChildJvm join(Duration lease) throws Exception {
    String id = UUID.randomUUID().toString().substring(0, 8);
    ChildJvm child = ChildJvm.start("elect-" + id, "elect", "namespace=test", "node=elect-" + id,
        "election=" + election, "leaseMs=" + lease.toMillis());
    children.add(child);
    nodes.put(child, "elect-" + id);
    child.awaitLine("JOINED", CHILD_START);
    return child;
  }

  /** A child leads if it is alive and its last ELECTED/REVOKED line is ELECTED. */
  private static boolean leads(ChildJvm c) {
    if (!c.isAlive()) {
      return false;
    }
    List<String> elected = c.linesStarting("ELECTED");
    return elected.size() > c.linesStarting("REVOKED").size();
  }

  private List<ChildJvm> leaders() {
    return children.stream().filter(LeaderElectionProcessTest::leads).toList();
  }

  /** Every ELECTED line of every child, as {token, nanos}. */
  private List<long[]> terms() {
    List<long[]> terms = new ArrayList<>();
    for (ChildJvm c : children) {
      for (String line : c.linesStarting("ELECTED")) {
        String[] w = line.split(" ");
        terms.add(new long[] {Long.parseLong(w[1]), Long.parseLong(w[2])});
      }
    }
    terms.sort(Comparator.comparingLong(t -> t[1]));
    return terms;
  }

  @Test
  void sigkillLeader_repeatedly_exactlyOneNewLeaderEachTime_termsIncrease() throws Exception {
    LockKey key = LockKey.named("test", LeaderElection.lockName(election));
    for (int i = 0; i < 3; i++) {
      join();
    }
    List<Double> failoverMs = new ArrayList<>();
    for (int round = 0; round <= KILLS; round++) {
      int done = round;
      await("one leader and two standbys waiting on the server", Duration.ofSeconds(30),
          () -> leaders().size() == 1 && serverWaiters(key) == 2);
      assertThat(terms()).as("terms after round %d", round).hasSize(round + 1);
      assertThat(leaders()).hasSize(1);
      if (round == KILLS) {
        break;
      }
      ChildJvm leader = leaders().get(0);
      long killed = System.nanoTime();
      leader.kill();
      await("a new leader", Duration.ofSeconds(30), () -> terms().size() == done + 2);
      List<long[]> terms = terms();
      failoverMs.add((terms.get(terms.size() - 1)[1] - killed) / 1e6);
      assertThat(leader.awaitExit(Duration.ofSeconds(10))).isEqualTo(137);
      assertThat(leaders()).as("leaders after kill %d", round + 1).hasSize(1);
      join(); // back to three
    }
    List<long[]> terms = terms();
    for (int i = 1; i < terms.size(); i++) {
      assertThat(terms.get(i)[0]).as("token of term %d", i).isGreaterThan(terms.get(i - 1)[0]);
    }
    System.out.println("SIGKILL of the leader: new leader elected after (ms) " + failoverMs);
    for (ChildJvm c : children) {
      assertThat(c.linesStarting("ERROR")).as(c.output()).isEmpty();
    }
  }

  /** The word after which a line carries a number, parsed: {@code word(line, "DEADLINE")}. */
  private static long after(String line, String word) {
    String[] w = line.split(" ");
    for (int i = 0; i < w.length - 1; i++) {
      if (w[i].equals(word)) {
        return Long.parseLong(w[i + 1]);
      }
    }
    throw new AssertionError("no " + word + " in: " + line);
  }

  /** The token and time of a line {@code ELECTED <token> <t>} or {@code REVOKED <reason> <token> <t> ...}. */
  private static long[] tokenAndTime(String line) {
    String[] w = line.split(" ");
    int i = w[0].equals("ELECTED") ? 1 : 2;
    return new long[] {Long.parseLong(w[i]), Long.parseLong(w[i + 1])};
  }

  /** Three children with the short lease; waits for one leader and two standbys on the server. */
  private LockKey threeWithShortLease() throws Exception {
    LockKey key = LockKey.named("test", LeaderElection.lockName(election));
    for (int i = 0; i < 3; i++) {
      join(SHORT_LEASE);
    }
    awaitSteady(key, 1);
    return key;
  }

  /** Waits for one leader among the live children, two standbys waiting on the server, and {@code terms} terms. */
  private void awaitSteady(LockKey key, int terms) {
    await("one leader, two standbys waiting on the server, " + terms + " terms", Duration.ofSeconds(30),
        () -> leaders().size() == 1 && serverWaiters(key) == 2 && terms().size() == terms);
  }

  /** The ELECTED line of the newest term, waiting for term number {@code n} (1-based) to appear. */
  private long[] awaitTerm(int n, Duration timeout) {
    await("term " + n, timeout, () -> terms().size() >= n);
    List<long[]> terms = terms();
    assertThat(terms).as("terms: one new at a time").hasSize(n);
    return terms.get(n - 1);
  }

  /** The final checks of a run: tokens strictly increase in election order; no child reported an error. */
  private void assertTokensIncreaseAndNoErrors() {
    List<long[]> terms = terms();
    for (int i = 1; i < terms.size(); i++) {
      assertThat(terms.get(i)[0]).as("token of term %d", i).isGreaterThan(terms.get(i - 1)[0]);
    }
    for (ChildJvm c : children) {
      assertThat(c.linesStarting("ERROR")).as(c.output()).isEmpty();
    }
  }

  @Test
  void terminateLeadersBackend_repeatedly_exactlyOneNewLeaderEachTime_termsIncrease() throws Exception {
    LockKey key = threeWithShortLease();
    List<Double> failoverMs = new ArrayList<>();
    for (int round = 1; round <= ROUNDS; round++) {
      ChildJvm old = leaders().get(0);
      long oldToken = tokenAndTime(old.lastLineStarting("ELECTED"))[0];
      // the backend that holds the election's lock, by the who-holds-what view: must be the leader child's
      Leader holder = LeaderElection.currentLeader(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA, "test", election)
          .orElseThrow(() -> new AssertionError("the view shows no leader"));
      assertThat(holder.node()).as("the view's leader").isEqualTo(Optional.of(nodes.get(old)));
      assertThat(holderPids(key)).as("pg_locks' holder of the election's lock").containsExactly(holder.pid());
      int revokedBefore = old.linesStarting("REVOKED").size();
      long terminated = System.nanoTime();
      assertThat(terminate(holder.pid())).as("pg_terminate_backend(%d)", holder.pid()).isTrue();
      long[] next = awaitTerm(round + 1, Duration.ofSeconds(20));
      failoverMs.add((next[1] - terminated) / 1e6);
      assertThat(next[0]).as("the new term's token").isGreaterThan(oldToken);
      await("the old leader's revocation", Duration.ofSeconds(20),
          () -> old.linesStarting("REVOKED").size() > revokedBefore);
      String revoked = old.linesStarting("REVOKED").get(revokedBefore);
      // the backend was terminated long before the 2 s lease could run out: the cause is the connection
      assertThat(revoked).as("the old leader's revocation").matches("REVOKED CONNECTION_LOST " + oldToken + " .*");
      awaitSteady(key, round + 1); // the old leader stands again
      assertThat(leaders()).as("leaders after termination %d", round).hasSize(1);
    }
    assertTokensIncreaseAndNoErrors();
    System.out.println("pg_terminate_backend of the leader: new leader elected after (ms) " + failoverMs);
  }

  @Test
  void sigstopLeaderPastLease_successorAfterLease_oldRevokedOnResumeFirst() throws Exception {
    LockKey key = threeWithShortLease();
    List<Double> failoverMs = new ArrayList<>();
    for (int round = 1; round <= ROUNDS; round++) {
      ChildJvm old = leaders().get(0);
      String oldElected = old.lastLineStarting("ELECTED");
      long oldToken = tokenAndTime(oldElected)[0];
      long stopped = System.nanoTime();
      old.signal("STOP");
      long[] next = awaitTerm(round + 1, SHORT_LEASE.plusSeconds(20));
      failoverMs.add((next[1] - stopped) / 1e6);
      assertThat(next[0]).as("the new term's token").isGreaterThan(oldToken);
      // the server frees the lock only after the lease (idle_session_timeout) from the old leader's
      // last round trip, at most a third of the lease before the stop (its heartbeat)
      assertThat(next[1] - stopped).as("ns from SIGSTOP to the successor's election")
          .isGreaterThan(SHORT_LEASE.toNanos() / 2);
      int seen = old.lineCount();
      old.send("CHECK"); // read by the child when it resumes
      old.signal("CONT");
      String first = old.awaitAnyLine(seen, Duration.ofSeconds(20), "ELECTED", "REVOKED");
      assertThat(first).as("the resumed leader's first election event").startsWith("REVOKED LEASE_EXPIRED "
          + oldToken + " ");
      assertThat(old.awaitAnyLine(seen, Duration.ofSeconds(20), "LEADER")).as("isLeader() on resume")
          .startsWith("LEADER false ");
      // the core's lease rule: the old term's lease deadline passed before the successor was elected
      assertThat(after(first, "DEADLINE")).as("the old leader's lease deadline vs the successor's election")
          .isLessThan(next[1]);
      awaitSteady(key, round + 1); // the resumed one stands again
      assertThat(leaders()).as("leaders after pause %d", round).hasSize(1);
    }
    assertTokensIncreaseAndNoErrors();
    System.out.println("SIGSTOP of the leader (lease " + SHORT_LEASE.toMillis() + " ms): new leader elected after (ms) "
        + failoverMs);
  }

  @Test
  void cleanShutdownOfLeader_repeatedly_successorElectedAfterShutdownRevocation() throws Exception {
    LockKey key = threeWithShortLease();
    List<Double> failoverMs = new ArrayList<>();
    for (int round = 1; round <= ROUNDS; round++) {
      ChildJvm old = leaders().get(0);
      long oldToken = tokenAndTime(old.lastLineStarting("ELECTED"))[0];
      int seen = old.lineCount();
      old.send("EXIT");
      String revoked = old.awaitAnyLine(seen, Duration.ofSeconds(20), "REVOKED");
      assertThat(revoked).as("the old leader's revocation").startsWith("REVOKED SHUTDOWN " + oldToken + " ");
      long[] next = awaitTerm(round + 1, Duration.ofSeconds(20));
      long revokedAt = tokenAndTime(revoked)[1];
      failoverMs.add((next[1] - revokedAt) / 1e6);
      assertThat(next[1]).as("the successor's election vs the SHUTDOWN revocation").isGreaterThan(revokedAt);
      assertThat(next[0]).as("the new term's token").isGreaterThan(oldToken);
      assertThat(old.awaitExit(Duration.ofSeconds(20))).as("exit code of the closed child").isZero();
      assertThat(leaders()).as("leaders after shutdown %d", round).hasSize(1);
      join(SHORT_LEASE); // back to three
      awaitSteady(key, round + 1);
    }
    assertTokensIncreaseAndNoErrors();
    System.out.println("clean shutdown of the leader: new leader elected after its revocation (ms) " + failoverMs);
  }

  private static List<Integer> holderPids(LockKey key) throws Exception {
    try (Connection c = db().connect()) {
      return holderPids(c, key);
    }
  }

  private static boolean terminate(int pid) throws Exception {
    try (Connection c = db().connect(); PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }
}
