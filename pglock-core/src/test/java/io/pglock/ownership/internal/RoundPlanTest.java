package io.pglock.ownership.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * A balancing round's decisions alone, without a database: over generated groups (seeded, so a
 * failure repeats), every plan keeps the rules, and members that each follow their plan round
 * after round, seeing the others' holdings, reach the balance and stay there.
 */
class RoundPlanTest {
  private static final long SEED = 20261125L;

  /** A group: which member holds which resource (a resource at most once), and the resources wanted. */
  private record Group(Set<String> wanted, Map<String, TreeSet<String>> holdings) {
    Map<String, Integer> counts() {
      Map<String, Integer> c = new HashMap<>();
      holdings.forEach((m, rs) -> c.put(m, rs.size()));
      return c;
    }

    boolean held(String r) {
      return holdings.values().stream().anyMatch(rs -> rs.contains(r));
    }
  }

  private static Group randomGroup(Random rnd) {
    int resources = rnd.nextInt(40);
    int members = 1 + rnd.nextInt(7);
    Set<String> wanted = new LinkedHashSet<>();
    for (int i = 0; i < resources; i++) {
      wanted.add("r" + i);
    }
    Map<String, TreeSet<String>> holdings = new HashMap<>();
    for (int m = 0; m < members; m++) {
      holdings.put("m" + m, new TreeSet<>());
    }
    for (String r : wanted) {
      int owner = rnd.nextInt(members + 2); // some free
      if (owner < members) {
        holdings.get("m" + owner).add(r);
      }
    }
    return new Group(wanted, holdings);
  }

  @Test
  void everyPlan_givesUpOrTakes_neverBoth_neverAHeldOrUnwantedResource_neverPastTheShare() {
    Random rnd = new Random(SEED);
    for (int i = 0; i < 5_000; i++) {
      Group g = randomGroup(rnd);
      for (String m : g.holdings().keySet()) {
        List<String> owned = List.copyOf(g.holdings().get(m));
        RoundPlan p = RoundPlan.plan(m, g.wanted(), owned, g.counts(), g::held);
        int quota = FairShare.quota(g.counts(), m, owned.size(), g.wanted().size());
        String at = "case " + i + ", member " + m + ": " + g + " -> " + p;
        assertThat(p.giveUp().isEmpty() || p.free().isEmpty()).as(at).isTrue();
        assertThat(p.giveUp()).as(at).hasSize(Math.max(0, owned.size() - quota));
        assertThat(owned).as(at).containsAll(p.giveUp());
        // the last by name go, the first stay
        assertThat(p.giveUp()).as(at).allMatch(r -> owned.indexOf(r) >= quota);
        assertThat(p.free()).as(at).allMatch(r -> g.wanted().contains(r) && !g.held(r));
        assertThat(p.wantMore()).as(at).isEqualTo(p.free().isEmpty() ? 0 : quota - owned.size());
        if (!p.giveUp().isEmpty() || p.wantMore() > 0) {
          assertThat(owned.size() - p.giveUp().size() + p.wantMore()).as(at + ": the share exactly").isEqualTo(quota);
        }
      }
    }
  }

  @Test
  void membersFollowingTheirPlans_reachTheBalance_andThenNothingMoves() {
    Random rnd = new Random(SEED + 1);
    for (int i = 0; i < 400; i++) {
      Group g = randomGroup(rnd);
      List<String> members = new ArrayList<>(new TreeSet<>(g.holdings().keySet()));
      int rounds = 0;
      while (!balanced(g) && rounds++ < 50) {
        for (String m : members) { // one after the other, each seeing the others' last moves
          TreeSet<String> mine = g.holdings().get(m);
          RoundPlan p = RoundPlan.plan(m, g.wanted(), List.copyOf(mine), g.counts(), g::held);
          p.giveUp().forEach(mine::remove);
          List<String> free = new ArrayList<>(p.free());
          java.util.Collections.shuffle(free, rnd);
          for (String r : free.subList(0, Math.min(p.wantMore(), free.size()))) {
            mine.add(r);
          }
        }
      }
      assertThat(balanced(g)).as("case %d after %d rounds: %s", i, rounds, g.holdings()).isTrue();
      Map<String, TreeSet<String>> before = copy(g.holdings());
      for (String m : members) {
        RoundPlan p = RoundPlan.plan(m, g.wanted(), List.copyOf(g.holdings().get(m)), g.counts(), g::held);
        assertThat(p.giveUp()).as("balanced, case %d, %s gives up nothing", i, m).isEmpty();
        assertThat(p.wantMore()).as("balanced, case %d, %s takes nothing", i, m).isZero();
      }
      assertThat(g.holdings()).isEqualTo(before);
    }
  }

  @Test
  void removed_isWhatIsOwnedButNoLongerWanted_inNameOrder() {
    assertThat(RoundPlan.removed(Set.of("b", "d"), List.of("a", "b", "c", "d"))).containsExactly("a", "c");
    assertThat(RoundPlan.removed(Set.of(), List.of("a"))).containsExactly("a");
    assertThat(RoundPlan.removed(Set.of("a"), List.of())).isEmpty();
  }

  /** Every wanted resource held once, counts within one. */
  private static boolean balanced(Group g) {
    Set<String> seen = new HashSet<>();
    int min = Integer.MAX_VALUE;
    int max = 0;
    for (TreeSet<String> rs : g.holdings().values()) {
      for (String r : rs) {
        if (!seen.add(r)) {
          throw new AssertionError("two owners of " + r + ": " + g.holdings());
        }
      }
      min = Math.min(min, rs.size());
      max = Math.max(max, rs.size());
    }
    return seen.equals(g.wanted()) && max - min <= 1;
  }

  private static Map<String, TreeSet<String>> copy(Map<String, TreeSet<String>> m) {
    Map<String, TreeSet<String>> c = new HashMap<>();
    m.forEach((k, v) -> c.put(k, new TreeSet<>(v)));
    return c;
  }
}
