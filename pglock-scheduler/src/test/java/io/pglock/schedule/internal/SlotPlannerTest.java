package io.pglock.schedule.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.schedule.MissedSlots;
import io.pglock.schedule.Overlap;
import io.pglock.schedule.Schedule;
import io.pglock.schedule.internal.SlotPlanner.Action;
import io.pglock.schedule.internal.SlotPlanner.Decision;
import io.pglock.schedule.internal.SlotPlanner.Policy;
import io.pglock.schedule.internal.SlotPlanner.RunSpan;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The planner on the histories of issue 14's defects, one example each. */
class SlotPlannerTest {
  private static final Schedule EVERY_SECOND = Schedule.fixedRate(Duration.ofSeconds(1));
  private static final Instant T0 = Instant.parse("2026-11-25T10:00:00Z");

  private static Instant at(double seconds) {
    return T0.plusMillis(Math.round(seconds * 1000));
  }

  private static List<Action> actions(List<Decision> ds) {
    return ds.stream().map(Decision::action).toList();
  }

  /** Overlap.QUEUE: the slots that came during a 5 s run all run after it, however late the pass. */
  @Test
  void queue_slotsDuringALongRun_allRun_noneMissed() {
    Policy p = new Policy(MissedSlots.SKIP, Optional.of(Duration.ofSeconds(1)), 10, Overlap.QUEUE);
    List<Decision> ds = SlotPlanner.plan(EVERY_SECOND, p, T0, at(5.3), List.of(new RunSpan(at(0.01), at(5.01))));
    assertThat(actions(ds)).containsExactly(Action.RUN, Action.RUN, Action.RUN, Action.RUN, Action.RUN);
  }

  /** Overlap.SKIP: slots during a run (here while a manual trigger waits behind it) are overlaps, not catch-ups. */
  @Test
  void skipOverlap_slotsDuringARun_areOverlaps_evenWhenDecidedLate_underRunEach() {
    Policy p = new Policy(MissedSlots.RUN_EACH, Optional.of(Duration.ofSeconds(1)), 10, Overlap.SKIP);
    List<Decision> ds = SlotPlanner.plan(EVERY_SECOND, p, T0, at(4.5), List.of(new RunSpan(at(0.01), at(4.2))));
    assertThat(actions(ds)).containsExactly(Action.SKIP_OVERLAP, Action.SKIP_OVERLAP, Action.SKIP_OVERLAP,
        Action.SKIP_OVERLAP);
  }

  /** RUN_ONCE after a 25 s outage: one catch-up run of the newest missed slot, though an on-time slot is due. */
  @Test
  void runOnce_withAnOnTimeSlotDueInTheSamePass_runsOneCatchUp() {
    Policy p = new Policy(MissedSlots.RUN_ONCE, Optional.of(Duration.ofSeconds(1)), 10, Overlap.SKIP);
    List<Decision> ds = SlotPlanner.plan(EVERY_SECOND, p, T0, at(25.5), List.of());
    assertThat(ds).hasSize(25);
    assertThat(ds.stream().filter(d -> d.action() == Action.CATCH_UP).map(Decision::slot)).containsExactly(at(24));
    assertThat(ds.get(24)).isEqualTo(new Decision(at(25), Action.RUN));
    assertThat(ds.subList(0, 23)).allMatch(d -> d.action() == Action.SKIP_MISSED);
  }

  /** A restart with the defaults: a per-second task runs its current second, not a burst of the ones it was down. */
  @Test
  void restartWithDefaults_perSecondTask_noBurstOfOldSlots() {
    Policy p = new Policy(MissedSlots.SKIP, Optional.empty(), 10, Overlap.SKIP);
    List<Decision> ds = SlotPlanner.plan(EVERY_SECOND, p, T0, at(9.46), List.of());
    assertThat(ds).hasSize(9);
    assertThat(ds.stream().filter(d -> d.action() == Action.RUN).map(Decision::slot)).containsExactly(at(9));
    // a task every minute keeps the 10 s bound
    Schedule everyMinute = Schedule.fixedRate(Duration.ofMinutes(1));
    assertThat(SlotPlanner.lateness(everyMinute, p, T0)).isEqualTo(Duration.ofSeconds(10));
    assertThat(SlotPlanner.lateness(EVERY_SECOND, p, T0)).isEqualTo(Duration.ofSeconds(1));
  }

  /** A gap longer than a pass: the pass is cut at MAX_SCAN and skips what it saw; the catch-up comes in the last pass. */
  @Test
  void longGap_cutIntoPasses_oneCatchUpAtTheEnd() {
    Policy p = new Policy(MissedSlots.RUN_ONCE, Optional.of(Duration.ofSeconds(1)), 10, Overlap.SKIP);
    List<Decision> first = SlotPlanner.plan(EVERY_SECOND, p, T0, at(1500.5), List.of());
    assertThat(first).hasSize(SlotPlanner.MAX_SCAN).allMatch(d -> d.action() == Action.SKIP_MISSED);
    List<Decision> second = SlotPlanner.plan(EVERY_SECOND, p, first.get(999).slot(), at(1500.5), List.of());
    assertThat(second).hasSize(500);
    assertThat(second.get(498)).isEqualTo(new Decision(at(1499), Action.CATCH_UP));
    assertThat(second.get(499)).isEqualTo(new Decision(at(1500), Action.RUN));
  }

  /**
   * Review of issue 14, a stalled runner: another node's run of slot 0 keeps the lock until 5.6 s
   * and records no end. The slots that waited behind it are decided again with the lock free: the
   * ones older than their lateness are missed (SKIP), the newest, on time, runs; none is run late.
   */
  @Test
  void afterWait_behindARunWithoutARecordedEnd_lateSlotsAreMissed_theOnTimeOneRuns() {
    Policy p = new Policy(MissedSlots.SKIP, Optional.empty(), 10, Overlap.SKIP);
    List<Decision> ds = SlotPlanner.afterWait(EVERY_SECOND, p, T0, at(5.6), List.of(),
        List.of(new SlotPlanner.OtherRun(T0, Optional.empty())));
    assertThat(actions(ds)).containsExactly(Action.SKIP_MISSED, Action.SKIP_MISSED, Action.SKIP_MISSED,
        Action.SKIP_MISSED, Action.RUN);
    // RUN_ONCE: one catch-up, the newest missed slot
    Policy once = new Policy(MissedSlots.RUN_ONCE, Optional.empty(), 10, Overlap.SKIP);
    assertThat(actions(SlotPlanner.afterWait(EVERY_SECOND, once, T0, at(5.6), List.of(),
        List.of(new SlotPlanner.OtherRun(T0, Optional.empty()))))).containsExactly(Action.SKIP_MISSED,
            Action.SKIP_MISSED, Action.SKIP_MISSED, Action.CATCH_UP, Action.RUN);
  }

  /** A run whose runner recorded its end covers the slots that came during it: overlaps under SKIP, runs under QUEUE. */
  @Test
  void afterWait_behindARunWithARecordedEnd_itsSlotsAreOverlaps() {
    SlotPlanner.OtherRun recorded = new SlotPlanner.OtherRun(at(0.01), Optional.of(at(3.5)));
    Policy skip = new Policy(MissedSlots.SKIP, Optional.of(Duration.ofSeconds(1)), 10, Overlap.SKIP);
    assertThat(actions(SlotPlanner.afterWait(EVERY_SECOND, skip, T0, at(4.6), List.of(), List.of(recorded))))
        .containsExactly(Action.SKIP_OVERLAP, Action.SKIP_OVERLAP, Action.SKIP_OVERLAP, Action.RUN);
    Policy queue = new Policy(MissedSlots.SKIP, Optional.of(Duration.ofSeconds(1)), 10, Overlap.QUEUE);
    assertThat(actions(SlotPlanner.afterWait(EVERY_SECOND, queue, T0, at(4.6), List.of(), List.of(recorded))))
        .containsExactly(Action.RUN, Action.RUN, Action.RUN, Action.RUN);
  }

  /**
   * The naive fix's trap: the lock was held by a node only claiming, and the running row started
   * before the slot is a dead runner's, not swept yet. Its end was never recorded, so it covers
   * nothing: the slot, still on time once the lock is free, runs (it is not skipped as an overlap).
   */
  @Test
  void afterWait_behindADeadRunnersRowAndAClaimer_theSlotRuns() {
    Policy p = new Policy(MissedSlots.SKIP, Optional.of(Duration.ofSeconds(1)), 10, Overlap.SKIP);
    List<Decision> ds = SlotPlanner.afterWait(EVERY_SECOND, p, T0, at(1.05), List.of(),
        List.of(new SlotPlanner.OtherRun(at(-30), Optional.empty())));
    assertThat(ds).containsExactly(new Decision(at(1), Action.RUN));
  }
}
