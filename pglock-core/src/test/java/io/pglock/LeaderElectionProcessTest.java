package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.election.LeaderElection;
import io.pglock.process.ChildJvm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
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

  private final List<ChildJvm> children = new ArrayList<>();
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
  }

  private ChildJvm join() throws Exception {
    String id = UUID.randomUUID().toString().substring(0, 8);
    ChildJvm child = ChildJvm.start("elect-" + id, "elect", "namespace=test", "node=elect-" + id,
        "election=" + election, "leaseMs=" + PgLocksBuilder.DEFAULT_LEASE.toMillis());
    children.add(child);
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
}
