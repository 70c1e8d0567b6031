package io.pglock.ownership.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * How many resources one member should own: {@code R / n} each, and one more for {@code R % n} of
 * them, so that owned counts differ by at most one. The extra ones go to the members that hold the
 * most already (ties by id), so that a balanced group stays as it is: with index-only rules a
 * member joining or leaving would move resources between members that were already balanced.
 * Every member computes the same answer from the same snapshot; different snapshots only delay
 * the balance by a round, they never give a resource two owners (the locks do that).
 */
public final class FairShare {
  private FairShare() {}

  /**
   * The number of resources {@code me} should own.
   *
   * @param held how many resources each live member holds now (by id); {@code me} is added with
   *     {@code mine} if it is missing (its membership is not in the snapshot yet)
   * @param me this member's id
   * @param mine how many resources {@code me} holds now
   * @param resources the number of resources to share
   */
  public static int quota(Map<String, Integer> held, String me, int mine, int resources) {
    List<Map.Entry<String, Integer>> members = new ArrayList<>(held.entrySet());
    members.removeIf(e -> e.getKey().equals(me));
    members.add(Map.entry(me, mine));
    int n = members.size();
    members.sort(Comparator.<Map.Entry<String, Integer>>comparingInt(Map.Entry::getValue).reversed()
        .thenComparing(Map.Entry::getKey));
    int rank = 0;
    while (!members.get(rank).getKey().equals(me)) {
      rank++;
    }
    return resources / n + (rank < resources % n ? 1 : 0);
  }
}
