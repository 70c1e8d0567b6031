package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.election.Candidate;
import io.pglock.election.LeaderElection;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@code pglock leader NAME} against an election held by a {@link LeaderElection} of this test. */
@ExtendWith(NoLeakedLocks.class)
class LeaderCommandTest {
  private static final String NAMESPACE = "cli-leader-test";

  private final String election = "leader-" + UUID.randomUUID().toString().substring(0, 8);
  private final String node = "leader-test-" + ProcessHandle.current().pid();

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @Test
  void leader_namesTheLeadingNode_thenNoLeaderAfterClose() throws Exception {
    CompletableFuture<Term> elected = new CompletableFuture<>();
    CompletableFuture<Revocation> revoked = new CompletableFuture<>();
    try (PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).namespace(NAMESPACE).nodeName(node).build()) {
      LeaderElection e = LeaderElection.join(locks, election, new Candidate() {
        @Override
        public void elected(Term term) {
          elected.complete(term);
        }

        @Override
        public void revoked(Term term, Revocation reason) {
          revoked.complete(reason);
        }
      });
      try {
        assertThat(elected.get(20, TimeUnit.SECONDS).node()).isEqualTo(node);

        // the node's name is recorded by the library in the background: shown within about a second
        CliRun run = CliRun.awaitOnDatabase(Duration.ofSeconds(15), r -> r.out().contains("node      " + node),
            "leader", election, "--namespace", NAMESPACE);

        assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.OK);
        assertThat(run.after("election  ")).as(run.describe())
            .containsExactly(election + " (namespace " + NAMESPACE + ")");
        assertThat(run.after("pid       ")).as(run.describe()).singleElement().matches(p -> p.matches("\\d+"));
        assertThat(run.after("client    ")).as(run.describe()).singleElement().matches(c -> c.startsWith("pglock:" + node));
        assertThat(run.after("since     ")).as(run.describe()).singleElement()
            .matches(s -> s.matches("\\d{4}-.*Z \\((\\d+s|\\d+m\\d\\ds) ago\\)"));
        assertThat(CliRun.onDatabase("leader", election, "--namespace", "other-" + NAMESPACE).exitCode())
            .as("another namespace's election of the same name").isEqualTo(ExitCodes.NO_LEADER);
      } finally {
        e.close();
      }
      assertThat(revoked.get(10, TimeUnit.SECONDS)).isEqualTo(Revocation.SHUTDOWN);

      // close() revokes, then releases asynchronously: the command sees no leader once the lock is freed
      CliRun run = CliRun.awaitOnDatabase(Duration.ofSeconds(15), r -> r.exitCode() != ExitCodes.OK,
          "leader", election, "--namespace", NAMESPACE);
      assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.NO_LEADER);
      assertThat(run.out()).as(run.describe()).isEqualTo("no leader of election " + election + " in namespace "
          + NAMESPACE + System.lineSeparator());
    }
  }

  @Test
  void leader_blankName_isBadUsage() {
    assertThat(CliRun.onDatabase("leader", " ").exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(CliRun.onDatabase("leader").exitCode()).as("no NAME").isEqualTo(ExitCodes.USAGE);
  }

  @Test
  void leader_help_showsAnExampleAndTheNoLeaderExitCode() {
    CliRun run = CliRun.of("leader", "--help");
    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("pglock leader billing-daemon --namespace billing")
        .containsPattern("1\\s+no leader");
  }
}
