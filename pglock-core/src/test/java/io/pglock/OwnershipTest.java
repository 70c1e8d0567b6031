package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.ownership.OwnedResource;
import io.pglock.ownership.Owner;
import io.pglock.ownership.Ownership;
import io.pglock.ownership.Release;
import io.pglock.ownership.ResourceOwner;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Fair-share ownership among in-JVM members, each with a {@code PgLocks} of its own (so, as far as
 * the server can tell, separate processes), balancing every 100 ms. Every group name is fresh.
 */
class OwnershipTest extends PgLocksTestSupport {
  private static final Duration INTERVAL = Duration.ofMillis(100);
  private static final Duration WAIT = Duration.ofSeconds(20);
  private final String suffix = UUID.randomUUID().toString().substring(0, 8);
  private final String group = "shards-" + suffix;
  private final OwnershipRecorder recorder = new OwnershipRecorder();
  private final Map<String, Ownership> members = new LinkedHashMap<>();
  private final Map<String, PgLocks> nodes = new LinkedHashMap<>();

  @BeforeAll
  static void schema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  private static List<String> resources(int n) {
    return IntStream.range(0, n).mapToObj(i -> "r" + i).toList();
  }

  private Ownership join(String name, List<String> resources) {
    PgLocks locks = track(builder().nodeName(name + "-" + suffix).build());
    nodes.put(name, locks);
    Ownership o = track(Ownership.builder(locks, group).rebalanceInterval(INTERVAL)
        .join(resources, recorder.owner(name)));
    members.put(name, o);
    return o;
  }

  /** Every resource owned by exactly one live member, and the counts within one of each other. */
  private boolean balanced(int resources, List<String> live) {
    Set<String> seen = new HashSet<>();
    int min = Integer.MAX_VALUE;
    int max = 0;
    for (String m : live) {
      List<OwnedResource> owned = members.get(m).owned();
      for (OwnedResource r : owned) {
        if (!seen.add(r.resource())) {
          return false;
        }
      }
      min = Math.min(min, owned.size());
      max = Math.max(max, owned.size());
    }
    return seen.size() == resources && max - min <= 1;
  }

  @Test
  void threeMembers_everyResourceOwnedOnce_balanced_listedByOwners() {
    List<String> res = resources(10);
    for (String m : List.of("a", "b", "c")) {
      join(m, res);
    }
    await("10 resources balanced over 3", WAIT, () -> balanced(10, List.of("a", "b", "c")));
    assertThat(recorder.overlaps.get()).isZero();
    assertThat(recorder.believedOwner).hasSize(10);

    List<ResourceOwner> owners = Ownership.owners(nodes.get("a"), group);
    assertThat(owners).extracting(ResourceOwner::resource).containsExactlyInAnyOrderElementsOf(res);
    for (ResourceOwner o : owners) {
      String member = recorder.believedOwner.get(o.resource());
      assertThat(o.node()).as(o.resource()).contains(member + "-" + suffix);
    }
    OwnedResource one = members.get("a").owned().get(0);
    assertThat(one.fencingToken()).isPositive();
    assertThat(one.lockName()).isEqualTo(Ownership.lockName(group, one.resource()));
    assertThat(members.get("a").ownership(one.resource())).contains(one);
    assertThat(members.get("a").members()).hasSize(3);
  }

  @Test
  void memberJoins_takesItsShare_fromTheOthers_neverTwoOwners_tokensIncrease() {
    List<String> res = resources(12);
    for (String m : List.of("a", "b", "c")) {
      join(m, res);
    }
    await("4 each", WAIT, () -> balanced(12, List.of("a", "b", "c")));
    int movedBefore = 0;
    for (String m : List.of("a", "b", "c")) {
      movedBefore += recorder.lost(m, Release.REBALANCED).size();
    }
    Map<String, Long> tokensBefore = new LinkedHashMap<>();
    members.values().forEach(o -> o.owned().forEach(r -> tokensBefore.put(r.resource(), r.fencingToken())));

    join("d", res);
    await("3 each", WAIT, () -> balanced(12, List.of("a", "b", "c", "d")));
    assertThat(members.get("d").owned()).hasSize(3);
    assertThat(recorder.overlaps.get()).isZero();
    for (OwnedResource r : members.get("d").owned()) {
      assertThat(r.fencingToken()).as(r.resource()).isGreaterThan(tokensBefore.get(r.resource()));
    }
    int handedOn = 0;
    for (String m : List.of("a", "b", "c")) {
      handedOn += recorder.lost(m, Release.REBALANCED).size();
    }
    assertThat(handedOn - movedBefore).isEqualTo(3); // only what d took moved
  }

  @Test
  void memberCloses_toldShutdown_othersTakeItsResources() {
    List<String> res = resources(9);
    for (String m : List.of("a", "b", "c")) {
      join(m, res);
    }
    await("3 each", WAIT, () -> balanced(9, List.of("a", "b", "c")));
    List<OwnedResource> hadC = members.get("c").owned();

    members.get("c").close();
    members.get("c").close(); // idempotent
    assertThat(recorder.lost("c", Release.SHUTDOWN)).hasSize(hadC.size());
    assertThat(members.get("c").owned()).isEmpty();
    await("9 over a and b", WAIT, () -> balanced(9, List.of("a", "b")));
    assertThat(recorder.overlaps.get()).isZero();
    assertThat(Ownership.owners(nodes.get("a"), group)).hasSize(9);
  }

  @Test
  void memberBackendsTerminated_toldConnectionLost_othersTake_thenItRejoins() throws Exception {
    List<String> res = resources(8);
    join("a", res);
    join("b", res);
    await("4 each", WAIT, () -> balanced(8, List.of("a", "b")));
    int hadB = members.get("b").owned().size();

    Connection admin = connect();
    try (PreparedStatement ps = admin.prepareStatement("SELECT count(pg_terminate_backend(pid, 10000)) FROM "
        + "pg_stat_activity WHERE application_name LIKE ?")) {
      ps.setString(1, "%b-" + suffix + "%");
      ps.execute();
    }
    await("b told of each loss", WAIT, () -> recorder.lost("b", Release.CONNECTION_LOST).size() == hadB);
    await("balanced again, b back in", WAIT, () -> members.get("b").members().size() == 2
        && balanced(8, List.of("a", "b")));
    assertThat(members.get("b").owned()).isNotEmpty();
  }

  @Test
  void resourcesChange_removedOnesToldRemoved_newOnesShared() {
    List<String> res = resources(6);
    join("a", res);
    join("b", res);
    await("3 each", WAIT, () -> balanced(6, List.of("a", "b")));
    List<String> fewer = resources(4);
    List<String> more = new ArrayList<>(fewer);
    more.addAll(List.of("x", "y"));
    members.get("a").resources(more);
    members.get("b").resources(more);
    assertThat(members.get("a").resources()).containsExactlyInAnyOrderElementsOf(more);
    await("the new set balanced", WAIT, () -> balanced(6, List.of("a", "b"))
        && recorder.believedOwner.keySet().equals(new HashSet<>(more)));
    int removed = recorder.lost("a", Release.REMOVED).size() + recorder.lost("b", Release.REMOVED).size();
    assertThat(removed).isEqualTo(2);
    assertThat(recorder.overlaps.get()).isZero();
  }

  @Test
  void callbacksThatThrow_areLogged_andOwnershipGoesOn() {
    PgLocks locks = track(builder().nodeName("t-" + suffix).build());
    Ownership o = track(Ownership.builder(locks, group).rebalanceInterval(INTERVAL).join(resources(3), new Owner() {
      @Override
      public void gained(OwnedResource r) {
        throw new IllegalStateException("owner bug");
      }

      @Override
      public void lost(OwnedResource r, Release why) {
        throw new IllegalStateException("owner bug");
      }
    }));
    await("all 3 owned", WAIT, () -> o.owned().size() == 3);
    o.close();
    assertThat(o.owned()).isEmpty();
    assertThat(LogCapture.drainErrors()).hasSize(6).allMatch(e -> e.contains("callback threw"));
  }

  @Test
  void closeWithSlowLostCallback_returnsInTime_butReleasesOnlyAfterTheOwnerWasTold() {
    List<String> res = resources(2);
    PgLocks slowLocks = track(builder().nodeName("slow-" + suffix).build());
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    Owner recording = recorder.owner("slow");
    Ownership slow = track(Ownership.builder(slowLocks, group).rebalanceInterval(INTERVAL)
        .closeTimeout(Duration.ofMillis(100)).join(res, new Owner() {
          @Override
          public void gained(OwnedResource r) {
            recording.gained(r);
          }

          @Override
          public void lost(OwnedResource r, Release why) {
            try {
              release.await(); // the owner still stops its work on r
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            recording.lost(r, why);
          }
        }));
    await("slow owns both", WAIT, () -> slow.owned().size() == 2);
    Ownership other = join("b", res);

    long start = System.nanoTime();
    slow.close(); // times out: the lost callback waits
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    assertThat(other.owned()).as("nothing handed on before the owner was told").isEmpty();
    release.countDown();
    await("b owns both", WAIT, () -> other.owned().size() == 2);
    assertThat(recorder.overlaps.get()).isZero();
  }

  @Test
  void closeFromAGainedCallback_doesNotDeadlock_andTellsShutdown() {
    PgLocks locks = track(builder().nodeName("cb-" + suffix).build());
    java.util.concurrent.atomic.AtomicReference<Ownership> self = new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.CountDownLatch joined = new java.util.concurrent.CountDownLatch(1);
    Owner recording = recorder.owner("cb");
    Ownership o = track(Ownership.builder(locks, group).rebalanceInterval(INTERVAL).join(resources(1), new Owner() {
      @Override
      public void gained(OwnedResource r) {
        recording.gained(r);
        try {
          joined.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        self.get().close();
      }

      @Override
      public void lost(OwnedResource r, Release why) {
        recording.lost(r, why);
      }
    }));
    self.set(o);
    joined.countDown();
    await("told SHUTDOWN", WAIT, () -> recorder.lost("cb", Release.SHUTDOWN).size() == 1);
    await("released", WAIT, () -> Ownership.owners(locks, group).isEmpty());
  }

  @Test
  void secondMemberWithTheSameNodeName_isRefused() {
    PgLocks locks = track(builder().nodeName("same-" + suffix).build());
    track(Ownership.builder(locks, group).memberId("first").join(resources(2), recorder.owner("first")));
    assertThatThrownBy(() -> Ownership.builder(locks, group).memberId("second").join(resources(2),
        recorder.owner("second")))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("has the node name \"same-" + suffix)
        .hasMessageContaining("unique node name");
    assertThat(Ownership.builder(locks, group).memberId("first").toString()).isNotEmpty();
    PgLocks colon = track(builder().nodeName("a:b-" + suffix).build());
    assertThatThrownBy(() -> Ownership.join(colon, group, resources(1), recorder.owner("c")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not contain ':'");
  }

  @Test
  void badInput_clearErrors() {
    PgLocks locks = newLocks();
    Owner owner = recorder.owner("x");
    assertThatThrownBy(() -> Ownership.join(locks, " ", List.of("r"), owner))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("blank");
    assertThatThrownBy(() -> Ownership.join(locks, "a:b", List.of("r"), owner))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("':'");
    assertThatThrownBy(() -> Ownership.join(locks, group, List.of("r", " "), owner))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resource names must not be blank");
    assertThatThrownBy(() -> Ownership.join(locks, group, List.of("r"), null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("owner");
    assertThatThrownBy(() -> Ownership.join(locks, group, List.of("x".repeat(5000)), owner))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Ownership.builder(locks, group).rebalanceInterval(Duration.ofMillis(10)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rebalanceInterval must be from PT0.05S");
    assertThatThrownBy(() -> Ownership.builder(locks, group).memberId("m").memberId("n"))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("memberId was already set");
    Ownership first = track(Ownership.builder(locks, group).memberId("same").join(List.of("r"), owner));
    assertThatThrownBy(() -> Ownership.builder(locks, group).memberId("same").join(List.of("r"), owner))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("already in the group");
    first.close();
  }
}
