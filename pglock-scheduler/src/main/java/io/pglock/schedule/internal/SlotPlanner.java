package io.pglock.schedule.internal;

import io.pglock.schedule.MissedSlots;
import io.pglock.schedule.Overlap;
import io.pglock.schedule.Schedule;
import io.pglock.schedule.Task;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The slot decisions of one task as a pure function: the schedule, the policies, the newest slot
 * decided already, the database's time and this node's runs of the task in; a decision for each
 * slot due since, out. No I/O, no clock, no state, so that every policy can be checked without a
 * database over generated histories ({@code SlotPlannerPropertiesTest}); {@link SlotExecutor} carries
 * the decisions out, and the database still has the last word (a claim or a skip needs the slot's
 * time, or its lateness, to have passed by the database's clock).
 */
final class SlotPlanner {
  /** Slots decided per pass: a longer gap is worked through over several passes. */
  static final int MAX_SCAN = 1000;

  private SlotPlanner() {}

  /** What becomes of a slot. */
  enum Action {
    /** Claim and run it as scheduled (it may wait behind a run, and it is never reclassified). */
    RUN,
    /** Claim and run it as a catch-up run: it was missed and the policy runs it. */
    CATCH_UP,
    /** Record it as skipped: missed, and the policy does not run it. */
    SKIP_MISSED,
    /** Record it as skipped: it came while this node's run of the task went ({@link Overlap#SKIP}). */
    SKIP_OVERLAP
  }

  /** A slot and what becomes of it. */
  record Decision(Instant slot, Action action) {}

  /**
   * A run of the task on this node, on the database's clock (as this node measures it); its end is
   * null while it goes. It covers the slots that came while it went: after its start, before its end.
   */
  record RunSpan(Instant start, Instant end) {
    boolean covers(Instant slot) {
      return start.isBefore(slot) && (end == null || end.isAfter(slot));
    }
  }

  /** A task's policies, as the planner reads them. */
  record Policy(MissedSlots missedSlots, Optional<Duration> missedAfter, int catchUpLimit, Overlap overlap) {
    static Policy of(Task task) {
      return new Policy(task.missedSlots(), task.missedAfterSetting(), task.catchUpLimit(), task.overlap());
    }
  }

  /**
   * How late a slot may be found unclaimed and still run as scheduled: the task's
   * {@code missedAfter} if set; by default the smaller of {@link Task#DEFAULT_MISSED_AFTER} and the
   * time to the next slot, so that a slot whose successor has come is missed (after a restart, a
   * per-second task runs from now on, not a burst of the seconds it was down).
   *
   * @param schedule the schedule
   * @param policy the policies
   * @param slot a slot
   * @return its lateness bound
   */
  static Duration lateness(Schedule schedule, Policy policy, Instant slot) {
    if (policy.missedAfter().isPresent()) {
      return policy.missedAfter().get();
    }
    Optional<Instant> next = schedule.next(slot);
    if (next.isEmpty()) {
      return Task.DEFAULT_MISSED_AFTER;
    }
    Duration gap = Duration.between(slot, next.get());
    return gap.compareTo(Task.DEFAULT_MISSED_AFTER) < 0 ? gap : Task.DEFAULT_MISSED_AFTER;
  }

  /** {@return whether the slot, found unclaimed at {@code now}, was missed} */
  static boolean missed(Instant slot, Duration lateness, Instant now) {
    return !slot.plus(lateness).isAfter(now); // as the database checks a skip: slot <= now() - lateness
  }

  /**
   * Decides the slots due after {@code after} up to {@code now}, oldest first, at most
   * {@link #MAX_SCAN}.
   *
   * <ul>
   *   <li>A slot that came while one of this node's runs went is an overlap: {@link Overlap#SKIP}
   *       skips it, {@link Overlap#QUEUE} runs it after the run, however late (never missed).
   *   <li>Otherwise a slot found later than its {@link #lateness} is missed: {@link MissedSlots#SKIP}
   *       skips it; {@code RUN_ONCE} runs the newest missed slot of the pass as a catch-up and
   *       skips the others (whether or not on-time slots are due too); {@code RUN_EACH} runs the
   *       newest {@code catchUpLimit} as catch-ups and skips the older ones.
   *   <li>A pass cut at {@link #MAX_SCAN} skips every missed slot it saw: the newest missed slot
   *       lies beyond it, in a later pass.
   *   <li>Any other slot runs as scheduled.
   * </ul>
   *
   * @param schedule a slot schedule (not a fixed delay)
   * @param policy the task's policies
   * @param after the newest slot decided already
   * @param now the database's time
   * @param runs this node's runs of the task that may cover slots after {@code after}
   * @return the decisions, oldest first; empty if no slot is due
   */
  static List<Decision> plan(Schedule schedule, Policy policy, Instant after, Instant now, List<RunSpan> runs) {
    List<Instant> due = new ArrayList<>();
    Optional<Instant> s = schedule.next(after);
    while (s.isPresent() && !s.get().isAfter(now) && due.size() < MAX_SCAN) {
      due.add(s.get());
      s = schedule.next(s.get());
    }
    boolean truncated = due.size() == MAX_SCAN && s.isPresent() && !s.get().isAfter(now);
    Action[] actions = new Action[due.size()];
    List<Integer> missed = new ArrayList<>();
    for (int i = 0; i < due.size(); i++) {
      Instant slot = due.get(i);
      if (covered(slot, runs)) {
        actions[i] = policy.overlap() == Overlap.SKIP ? Action.SKIP_OVERLAP : Action.RUN;
      } else if (missed(slot, lateness(schedule, policy, slot), now)) {
        actions[i] = Action.SKIP_MISSED;
        missed.add(i);
      } else {
        actions[i] = Action.RUN;
      }
    }
    int catchUps = truncated ? 0 : switch (policy.missedSlots()) {
      case SKIP -> 0;
      case RUN_ONCE -> 1;
      case RUN_EACH -> policy.catchUpLimit();
    };
    for (int k = Math.max(0, missed.size() - catchUps); k < missed.size(); k++) {
      actions[missed.get(k)] = Action.CATCH_UP;
    }
    List<Decision> decisions = new ArrayList<>(due.size());
    for (int i = 0; i < due.size(); i++) {
      decisions.add(new Decision(due.get(i), actions[i]));
    }
    return decisions;
  }

  private static boolean covered(Instant slot, List<RunSpan> runs) {
    for (RunSpan r : runs) {
      if (r.covers(slot)) {
        return true;
      }
    }
    return false;
  }
}
