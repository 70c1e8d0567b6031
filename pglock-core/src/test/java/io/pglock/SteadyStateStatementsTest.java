package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.election.Candidate;
import io.pglock.election.LeaderElection;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import io.pglock.ownership.OwnedResource;
import io.pglock.ownership.Owner;
import io.pglock.ownership.Ownership;
import io.pglock.ownership.Release;
import io.pglock.testing.PrivateServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * What an election's leader and standbys, and an ownership group's members, send the server when
 * nothing changes, with the default settings (lease 30 s, rebalance interval 1 s): counted from a
 * private server's own statement log ({@code log_statement=all}, each line prefixed with the
 * connection's {@code application_name}) over a window of {@code pglock.cost.seconds} (default
 * 12 s). The figures are printed and stated in docs/leader-election.md and docs/ownership.md.
 */
class SteadyStateStatementsTest {
  private static final Candidate QUIET = new Candidate() {
    @Override
    public void elected(Term term) {}

    @Override
    public void revoked(Term term, Revocation reason) {}
  };
  private static final Owner NO_OWNER = new Owner() {
    @Override
    public void gained(OwnedResource r) {}

    @Override
    public void lost(OwnedResource r, Release why) {}
  };

  @Test
  void idleLeaderStandbysAndMembers_sendFewStatements() throws Exception {
    PrivateServer server;
    try {
      server = PrivateServer.start("log_statement=all", "log_line_prefix=%a@");
    } catch (PrivateServer.Unavailable e) {
      assumeTrue(false, "no private server here: " + e.getMessage());
      return;
    }
    List<AutoCloseable> open = new ArrayList<>();
    try (server) {
      measure(server, open);
    }
  }

  private static void measure(PrivateServer server, List<AutoCloseable> open) throws Exception {
    try {
      PgLockSchema.migrate(server.dataSource("migrate"), PgLockSchema.DEFAULT_SCHEMA);
      Map<String, LeaderElection> elections = new LinkedHashMap<>();
      Map<String, Ownership> members = new LinkedHashMap<>();
      for (String node : List.of("e1", "e2", "e3")) {
        PgLocks locks = PgLocks.builder(server.dataSource("ds-" + node)).namespace("cost").nodeName(node).build();
        open.add(locks);
        LeaderElection e = LeaderElection.join(locks, "daemon", QUIET);
        open.add(e);
        elections.put(node, e);
      }
      List<String> resources = List.of("r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11");
      for (String node : List.of("o1", "o2", "o3")) {
        PgLocks locks = PgLocks.builder(server.dataSource("ds-" + node)).namespace("cost").nodeName(node).build();
        open.add(locks);
        Ownership o = Ownership.join(locks, "shards", resources, NO_OWNER);
        open.add(o);
        members.put(node, o);
      }
      io.pglock.testing.Await.until("a leader and 4 resources per member", Duration.ofSeconds(30),
          () -> elections.values().stream().filter(LeaderElection::isLeader).count() == 1
              && members.values().stream().allMatch(o -> o.owned().size() == 4));
      // Let the start settle (the first rounds, the names recorded in the background), then count.
      LockSupport.parkNanos(Duration.ofSeconds(3).toNanos()); // a measurement window, not a synchronisation
      int from = server.serverLog().length();
      long seconds = Long.getLong("pglock.cost.seconds", 12);
      long start = System.nanoTime();
      LockSupport.parkNanos(Duration.ofSeconds(seconds).toNanos()); // the measurement window
      double window = (System.nanoTime() - start) / 1e9;
      String log = server.serverLog().substring(from);

      String leader = elections.entrySet().stream().filter(e -> e.getValue().isLeader()).findFirst().orElseThrow()
          .getKey();
      StringBuilder report = new StringBuilder("steady-state statements/s over " + Math.round(window) + " s:");
      double worstStandby = 0;
      for (String node : elections.keySet()) {
        double rate = count(log, node) / window;
        report.append(String.format(" %s(%s)=%.2f", node, node.equals(leader) ? "leader" : "standby", rate));
        if (!node.equals(leader)) {
          worstStandby = Math.max(worstStandby, rate);
        }
      }
      double worstMember = 0;
      for (String node : members.keySet()) {
        double rate = count(log, node) / window;
        report.append(String.format(" %s(member)=%.2f", node, rate));
        worstMember = Math.max(worstMember, rate);
      }
      System.out.println(report);
      for (String node : List.of(elections.keySet().stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow(),
          "o1")) {
        for (String line : log.split("\n")) {
          if (line.startsWith("pglock:" + node + ":") || line.startsWith("ds-" + node + "@")) {
            System.out.println("  " + line);
          }
        }
      }
      // A standby waits on the server: one statement per wait chunk (a third of the lease) and its
      // lock session's lease renewals. A member: one lock table query per interval, and renewals.
      assertThat(worstStandby).as(report.toString()).isLessThanOrEqualTo(0.5);
      assertThat(worstMember).as(report.toString()).isLessThanOrEqualTo(2.5);
    } finally {
      for (int i = open.size() - 1; i >= 0; i--) {
        open.get(i).close();
      }
    }
  }

  /** Statements the node's connections sent: its pglock sessions and its data source's own. */
  private static int count(String log, String node) {
    int n = 0;
    for (String line : log.split("\n")) {
      if ((line.startsWith("pglock:" + node + ":") || line.startsWith("ds-" + node + "@"))
          && (line.contains("LOG:  statement:") || line.contains("LOG:  execute"))) {
        n++;
      }
    }
    return n;
  }
}
