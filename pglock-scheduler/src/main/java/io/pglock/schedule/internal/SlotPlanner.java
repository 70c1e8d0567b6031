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
    /**
     * Claim and run it as scheduled. It may wait behind a run; it is decided again only after a
     * wait behind another node's run, once the task's lock is free ({@link SlotPlanner#afterWait}).
     */
    RUN,
    /** Claim and run it as a catch-up run: it was missed and the policy runs it. */
    CATCH_UP,
    /** Record it as skipped: missed, and the policy does not run it. */
    SKIP_MISSED,
    /**
     * Record it as skipped: it came while a run of the task went ({@link Overlap#SKIP}): this
     * node's, or another node's whose end its runner recorded ({@link SlotPlanner#covering}).
     */
    SKIP_OVERLAP
  }

  /** A slot and what becomes of it. */
  record Decision(Instant slot, Action action) {}

  /**
   * A run of the task, on the database's clock: this node's (its end null while it goes), or
   * another node's as {@link SlotPlanner#covering} counts it. It covers the slots that came while
   * it went: after its start, before its end.
   */
  record RunSpan(Instant start, Instant end) {
    boolean covers(Instant slot) {
      return start.isBefore(slot) && (end == null || end.isAfter(slot));
    }
  }

  /**
   * A run of another node that a slot of this node waited behind (the task's lock was taken, and
   * the run's row, started before the slot, said it went), as its row reads once the lock is free.
   * {@code end} is the end its runner recorded; empty if its runner recorded none (it stalled or
   * died mid-run and lost the lock: its row is still running, was marked disconnected by a sweep,
   * or was taken over by a retry), for then nobody knows when it stopped going.
   */
  record OtherRun(Instant start, Optional<Instant> end) {}

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
   *   <li>A slot that came while one of this node's runs went (or another node's, as
   *       {@link #covering} counts them) is an overlap: {@link Overlap#SKIP}
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
   * @param runs the runs of the task that may cover slots after {@code after}: this node's, and
   *     other nodes' as {@link #covering} gives them
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

  /**
   * The slots that other nodes' runs are known to have covered: a run with the end its runner
   * recorded covers the slots after its start and before its end, like a run of this node. A run
   * whose end nobody recorded covers none: the row of a runner that died before the slot still
   * reads "running" (until a sweep, which needs the lock free), and the lock may have been held by
   * a node only claiming; the slots that waited behind it are decided by their lateness alone.
   *
   * @param others the runs waited behind
   * @return their spans that count
   */
  static List<RunSpan> covering(List<OtherRun> others) {
    List<RunSpan> spans = new ArrayList<>();
    for (OtherRun o : others) {
      o.end().ifPresent(end -> spans.add(new RunSpan(o.start(), end)));
    }
    return spans;
  }

  /**
   * Decides again, once the task's lock is free, the slots that waited behind another node's run
   * (and those decided after them): they go back through the overlap and missed-slot policies as of
   * {@code now}. A slot that came during a run whose end its runner recorded is an overlap
   * ({@link Overlap#SKIP} skips it, {@link Overlap#QUEUE} runs it, however late); any other slot
   * found later than its lateness is missed and handled per {@link MissedSlots}; the rest run. So a
   * stalled runner's lock, freed by the server seconds later, does not release a burst of late
   * slots, and a slot that only waited for a node claiming (a dead runner's row not yet swept) is
   * never skipped as an overlap.
   *
   * @param schedule a slot schedule (not a fixed delay)
   * @param policy the task's policies
   * @param resolved the newest slot that has a row (every slot after it is decided again)
   * @param now the database's time, after the lock was found free
   * @param runs this node's runs of the task
   * @param others the other nodes' runs waited behind, as their rows read with the lock free
   * @return the decisions, oldest first, as {@link #plan} makes them
   */
  static List<Decision> afterWait(Schedule schedule, Policy policy, Instant resolved, Instant now, List<RunSpan> runs,
      List<OtherRun> others) {
    List<RunSpan> all = new ArrayList<>(runs);
    all.addAll(covering(others));
    return plan(schedule, policy, resolved, now, all);
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
