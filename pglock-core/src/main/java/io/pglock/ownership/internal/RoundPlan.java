package io.pglock.ownership.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * What one balancing round decides, from what the member wants, what it owns and what the lock
 * table says: no I/O, no clock, no thread. {@link DefaultOwnership} carries the decisions out (its
 * callbacks, releases and try-locks); this is where they are made, and tested on their own
 * ({@code RoundPlanTest}).
 *
 * @param giveUp resources to give up now as {@code REBALANCED}, in this order: this member holds
 *     more than its fair share
 * @param free resources nobody holds that this member may try to take, without waiting (the
 *     executor tries them in random order, so that members taking at once mostly try different
 *     ones)
 * @param wantMore how many of {@code free} to take at most
 */
record RoundPlan(List<String> giveUp, List<String> free, int wantMore) {
  private static final RoundPlan NOTHING = new RoundPlan(List.of(), List.of(), 0);

  RoundPlan {
    giveUp = List.copyOf(giveUp);
    free = List.copyOf(free);
  }

  /**
   * The resources owned that are no longer in the set to share: given up as {@code REMOVED} at the
   * start of a round, before the lock table is read.
   *
   * @param wanted the resources to share now
   * @param owned the resources this member owns, in name order
   * @return those to give up, in name order
   */
  static List<String> removed(Set<String> wanted, Collection<String> owned) {
    List<String> out = new ArrayList<>();
    for (String r : owned) {
      if (!wanted.contains(r)) {
        out.add(r);
      }
    }
    return out;
  }

  /**
   * The round's decision once the lock table was read: give up what is beyond the fair share (the
   * last by name: any choice is fair, a stable one moves less), or try free resources up to it.
   * Never both; never a resource someone holds; never one not wanted.
   *
   * @param memberId this member's id
   * @param wanted the resources to share now
   * @param owned the resources this member owns, in name order (all wanted: {@link #removed} went first)
   * @param heldCounts how many resources each live member holds, by id ({@link GroupSnapshot#heldCounts})
   * @param heldByAnyone whether the lock table shows a resource's lock held
   * @return the plan
   */
  static RoundPlan plan(String memberId, Set<String> wanted, List<String> owned, Map<String, Integer> heldCounts,
      Predicate<String> heldByAnyone) {
    int quota = FairShare.quota(heldCounts, memberId, owned.size(), wanted.size());
    int excess = owned.size() - quota;
    if (excess > 0) {
      List<String> giveUp = new ArrayList<>(owned.subList(owned.size() - excess, owned.size()));
      Collections.reverse(giveUp);
      return new RoundPlan(giveUp, List.of(), 0);
    }
    if (excess == 0) {
      return NOTHING;
    }
    Set<String> mine = new HashSet<>(owned);
    List<String> free = new ArrayList<>();
    for (String r : wanted) {
      if (!mine.contains(r) && !heldByAnyone.test(r)) {
        free.add(r);
      }
    }
    return free.isEmpty() ? NOTHING : new RoundPlan(List.of(), free, -excess);
  }
}
