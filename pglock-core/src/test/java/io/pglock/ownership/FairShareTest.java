package io.pglock.ownership;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.ownership.internal.FairShare;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The fair-share rule alone: quotas add up, differ by at most one, and keep a balanced group as it is. */
class FairShareTest {

  @Test
  void quotas_addUpToTheResources_andDifferByAtMostOne() {
    for (int members = 1; members <= 7; members++) {
      for (int resources = 0; resources <= 30; resources++) {
        Map<String, Integer> held = new HashMap<>();
        for (int i = 0; i < members; i++) {
          held.put("m" + i, (i * 7 + resources) % 5);
        }
        int sum = 0;
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (String m : held.keySet()) {
          int q = FairShare.quota(held, m, held.get(m), resources);
          sum += q;
          min = Math.min(min, q);
          max = Math.max(max, q);
        }
        assertThat(sum).as("%d members, %d resources", members, resources).isEqualTo(resources);
        assertThat(max - min).isLessThanOrEqualTo(1);
      }
    }
  }

  @Test
  void extraOnes_goToThoseHoldingMost_soABalancedGroupDoesNotMove() {
    // 5 resources over 2: b holds 3, a holds 2; b keeps its 3 although a sorts first.
    Map<String, Integer> held = Map.of("a", 2, "b", 3);
    assertThat(FairShare.quota(held, "b", 3, 5)).isEqualTo(3);
    assertThat(FairShare.quota(held, "a", 2, 5)).isEqualTo(2);
    // Ties go by id.
    Map<String, Integer> tied = Map.of("a", 0, "b", 0);
    assertThat(FairShare.quota(tied, "a", 0, 5)).isEqualTo(3);
    assertThat(FairShare.quota(tied, "b", 0, 5)).isEqualTo(2);
  }

  @Test
  void memberMissingFromTheSnapshot_countsItself() {
    // Just joined: the snapshot shows the other two only.
    Map<String, Integer> held = Map.of("a", 6, "b", 6);
    assertThat(FairShare.quota(held, "c", 0, 12)).isEqualTo(4);
    assertThat(FairShare.quota(Map.of(), "c", 0, 12)).isEqualTo(12);
  }
}
