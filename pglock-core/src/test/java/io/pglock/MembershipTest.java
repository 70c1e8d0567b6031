package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.election.Member;
import io.pglock.election.Membership;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Group membership among in-JVM nodes, each with a {@code PgLocks} of its own (so, as far as the
 * server can tell, separate processes). Every group name is fresh, so tests do not see each other.
 */
class MembershipTest extends PgLocksTestSupport {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private final String suffix = UUID.randomUUID().toString().substring(0, 8);
  private final String group = "workers-" + suffix;

  @BeforeAll
  static void schema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  private PgLocks node(String name) {
    return track(builder().nodeName(name + "-" + suffix).build());
  }

  private static List<String> ids(List<Member> members) {
    return members.stream().map(Member::id).toList();
  }

  @Test
  void join_threeNodes_eachListsAllAtOnce_withNodeAndPid() throws Exception {
    PgLocks a = node("a");
    PgLocks b = node("b");
    PgLocks c = node("c");
    Membership ma = track(Membership.join(a, group));
    Membership mb = track(Membership.join(b, group));
    Membership mc = track(Membership.join(c, group));
    List<String> all = List.of("a-" + suffix, "b-" + suffix, "c-" + suffix);

    // Listed as soon as join returns: the name was recorded at join, not a second later.
    for (Membership m : List.of(ma, mb, mc)) {
      assertThat(ids(m.members())).isEqualTo(all);
      assertThat(m.isJoined()).isTrue();
    }
    assertThat(ids(Membership.members(a, group))).isEqualTo(all);
    Member first = ma.members().get(0);
    assertThat(first.group()).isEqualTo(group);
    assertThat(first.node()).contains("a-" + suffix);
    Connection admin = connect();
    assertThat(holderPids(admin, a.key(Membership.lockName(group, "a-" + suffix)))).containsExactly(first.pid());
    assertThat(first.since()).isPresent();
    assertThat(ma.memberId()).isEqualTo("a-" + suffix);
    assertThat(ma.group()).isEqualTo(group);
  }

  @Test
  void close_member_removedAtOnce_othersStay_notToldLost() throws Exception {
    Membership ma = track(Membership.join(node("a"), group));
    Membership mb = track(Membership.join(node("b"), group));
    assertThat(ma.members()).hasSize(2);

    mb.close();
    mb.close(); // idempotent
    // The unlock is one round trip: well within a second, no lease involved.
    await("b gone from the list", Duration.ofSeconds(1), () -> ids(ma.members()).equals(List.of("a-" + suffix)));
    assertThat(mb.isJoined()).isFalse();
    assertThat(mb.lost().toCompletableFuture().isDone()).isFalse();
    assertThat(ma.isJoined()).isTrue();
  }

  @Test
  void terminateBackend_member_removedAtOnce_andTold() throws Exception {
    PgLocks b = node("b");
    Membership ma = track(Membership.join(node("a"), group));
    Membership mb = track(Membership.join(b, group));
    Connection admin = connect();
    List<Integer> pids = holderPids(admin, b.key(Membership.lockName(group, mb.memberId())));
    assertThat(pids).hasSize(1);

    try (PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(?, 10000)")) {
      ps.setInt(1, pids.get(0));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getBoolean(1)).isTrue();
      }
    }
    // pg_terminate_backend with a timeout returns once the backend is gone: its lock is freed.
    assertThat(ids(ma.members())).containsExactly(ma.memberId());
    LossCause cause = mb.lost().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(cause).isEqualTo(LossCause.CONNECTION_LOST);
    assertThat(mb.isJoined()).isFalse();
    // No rejoin by itself; joining again with the same id works.
    assertThat(ids(ma.members())).containsExactly(ma.memberId());
    Membership again = track(Membership.join(b, group));
    assertThat(ids(ma.members())).containsExactly(ma.memberId(), again.memberId());
  }

  @Test
  void join_duplicateId_refused_sameOrOtherPgLocks_nothingHeld() {
    PgLocks a = node("a");
    PgLocks b = node("b");
    Membership m = track(Membership.join(a, group, "worker-1"));

    assertThatThrownBy(() -> Membership.join(b, group, "worker-1"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("member id \"worker-1\" is already in the group \"" + group + "\"");
    assertThatThrownBy(() -> Membership.join(a, group, "worker-1"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already in the group");
    assertThat(b.heldLocks()).isZero();
    assertThat(ids(m.members())).containsExactly("worker-1");
    assertThat(m.isJoined()).isTrue();
  }

  @Test
  void members_otherGroupOrNamespace_notListed() {
    PgLocks a = node("a");
    PgLocks other = track(PgLocks.builder(db().dataSource()).namespace("other-" + suffix).nodeName("o-" + suffix).build());
    track(Membership.join(a, group, "x"));
    track(Membership.join(a, group + "-2", "y")); // a group whose name starts with this one's
    track(Membership.join(other, group, "z")); // the same group name in another namespace
    track(a.lock("member:" + group + "x").tryAcquire().orElseThrow()); // a lock that merely shares the prefix's start

    assertThat(ids(Membership.members(a, group))).containsExactly("x");
    assertThat(ids(Membership.members(a, group + "-2"))).containsExactly("y");
    assertThat(ids(Membership.members(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA, "other-" + suffix, group)))
        .containsExactly("z");
    assertThat(Membership.members(a, "nobody-" + suffix)).isEmpty();
  }

  @Test
  void join_badNames_refused() {
    PgLocks a = node("a");
    assertThatThrownBy(() -> Membership.join(a, "a:b")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must not contain ':'");
    assertThatThrownBy(() -> Membership.join(a, " ")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Membership.join(a, group, "")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Membership.join(a, group, "x".repeat(600))).isInstanceOf(IllegalArgumentException.class);
    assertThat(a.heldLocks()).isZero();
  }
}
