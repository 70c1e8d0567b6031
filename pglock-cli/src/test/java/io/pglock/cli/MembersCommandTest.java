package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.election.Membership;
import io.pglock.ownership.OwnedResource;
import io.pglock.ownership.Owner;
import io.pglock.ownership.Ownership;
import io.pglock.ownership.Release;
import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@code pglock members GROUP} against members joined by this test. */
@ExtendWith(NoLeakedLocks.class)
class MembersCommandTest {
  private static final String NAMESPACE = "cli-members-test";

  private final String group = "workers-" + UUID.randomUUID().toString().substring(0, 8);
  private final String node = "members-test-" + ProcessHandle.current().pid();

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @Test
  void members_listsEachMemberSortedById_thenNoMembersAfterClose() throws Exception {
    try (PgLocks a = PgLocks.builder(TestDatabase.get().dataSource()).namespace(NAMESPACE).nodeName(node + "-a").build();
        PgLocks b = PgLocks.builder(TestDatabase.get().dataSource()).namespace(NAMESPACE).nodeName(node + "-b").build()) {
      Membership mb = Membership.join(b, group, "w2");
      Membership ma = Membership.join(a, group, "w1");
      try {
        // listed at once: join records the member's lock name itself
        CliRun run = CliRun.onDatabase("members", group, "--namespace", NAMESPACE);
        assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.OK);
        String[] lines = run.out().split(System.lineSeparator());
        assertThat(lines).as(run.describe()).hasSize(4);
        assertThat(lines[0]).isEqualTo("group " + group + " (namespace " + NAMESPACE + "): 2 members");
        assertThat(lines[1]).matches("ID\\s+NODE\\s+PID\\s+SINCE");
        assertThat(lines[2]).matches("w1\\s+" + node + "-a\\s+\\d+\\s+\\d{4}-.*Z \\((\\d+s|\\d+m\\d\\ds) ago\\)");
        assertThat(lines[3]).matches("w2\\s+" + node + "-b\\s+\\d+\\s+\\d{4}-.*Z \\(.* ago\\)");
        assertThat(CliRun.onDatabase("members", group, "--namespace", "other-" + NAMESPACE).exitCode())
            .as("another namespace's group of the same name").isEqualTo(ExitCodes.NO_MEMBERS);
      } finally {
        ma.close();
        mb.close();
      }
      // close() releases asynchronously (one round trip)
      CliRun run = CliRun.awaitOnDatabase(Duration.ofSeconds(5), r -> r.exitCode() != ExitCodes.OK,
          "members", group, "--namespace", NAMESPACE);
      assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.NO_MEMBERS);
      assertThat(run.out()).as(run.describe()).isEqualTo("no members of group " + group + " in namespace "
          + NAMESPACE + System.lineSeparator());
    }
  }

  @Test
  void members_ofAnOwnershipGroup_showWhatEachOwns() throws Exception {
    try (PgLocks a = PgLocks.builder(TestDatabase.get().dataSource()).namespace(NAMESPACE).nodeName(node + "-a").build();
        PgLocks b = PgLocks.builder(TestDatabase.get().dataSource()).namespace(NAMESPACE).nodeName(node + "-b").build()) {
      Owner quiet = new Owner() {
        @Override
        public void gained(OwnedResource r) {}

        @Override
        public void lost(OwnedResource r, Release why) {}
      };
      List<String> resources = List.of("s0", "s1", "s2", "s3");
      try (Ownership oa = Ownership.builder(a, group).rebalanceInterval(Duration.ofMillis(100)).join(resources, quiet);
          Ownership ob = Ownership.builder(b, group).rebalanceInterval(Duration.ofMillis(100)).join(resources, quiet)) {
        Await.until("2 resources each", Duration.ofSeconds(20), () -> oa.owned().size() == 2 && ob.owned().size() == 2);
        CliRun run = CliRun.onDatabase("members", group, "--namespace", NAMESPACE, "--owned");
        assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.OK);
        String[] lines = run.out().split(System.lineSeparator());
        assertThat(lines[1]).as(run.describe()).matches("ID\\s+NODE\\s+PID\\s+SINCE\\s+OWNS");
        String ownedByA = String.join(" ", oa.owned().stream().map(OwnedResource::resource).toList());
        assertThat(lines[2]).as(run.describe()).startsWith(node + "-a").endsWith("2: " + ownedByA);
        assertThat(lines[4]).isEqualTo("4 resources owned");
        assertThat(lines[6]).matches("RESOURCE\\s+MEMBER\\s+PID");
        assertThat(lines).hasSize(11);
        assertThat(lines[7]).startsWith("s0").contains(ob.ownership("s0").isPresent() ? node + "-b" : node + "-a");
      }
    }
  }

  @Test
  void members_badGroup_isBadUsage() {
    assertThat(CliRun.onDatabase("members", " ").exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(CliRun.onDatabase("members", "a:b").exitCode()).as("a ':' in GROUP").isEqualTo(ExitCodes.USAGE);
    assertThat(CliRun.onDatabase("members").exitCode()).as("no GROUP").isEqualTo(ExitCodes.USAGE);
  }

  @Test
  void members_help_showsAnExampleAndTheNoMembersExitCode() {
    CliRun run = CliRun.of("members", "--help");
    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("pglock members workers --namespace billing")
        .containsPattern("1\\s+no members");
  }
}
