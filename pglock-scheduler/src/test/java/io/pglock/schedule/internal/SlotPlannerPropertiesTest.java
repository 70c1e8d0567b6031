package io.pglock.schedule.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.schedule.MissedSlots;
import io.pglock.schedule.Overlap;
import io.pglock.schedule.Schedule;
import io.pglock.schedule.Task;
import io.pglock.schedule.internal.SlotPlanner.Action;
import io.pglock.schedule.internal.SlotPlanner.Decision;
import io.pglock.schedule.internal.SlotPlanner.Policy;
import io.pglock.schedule.internal.SlotPlanner.RunSpan;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The slot planner over generated histories, without a database: a node passes over a task at
 * random times (gaps up to a minute: outages, pauses, a slow loop) while its runs of the task
 * start and end at random; every pass's decisions are checked against the policies, and the
 * passes together against the schedule (each slot decided once, in order, none left out).
 */
class SlotPlannerPropertiesTest {
  private static final Instant T0 = Instant.parse("2026-11-25T10:00:00.300Z");

  /** One pass: the time moves on by {@code advanceMillis}, then a run of this node may start or end. */
  record Step(long advanceMillis, int runEvent) {}

  /** A generated history. */
  record History(long periodSeconds, Policy policy, List<Step> steps) {}

  @Provide
  Arbitrary<History> histories() {
    Arbitrary<Long> period = Arbitraries.of(1L, 2L, 3L, 10L, 60L);
    Arbitrary<Policy> policy = Combinators.combine(Arbitraries.of(MissedSlots.class),
        Arbitraries.longs().between(0, 30).map(s -> s == 0 ? Optional.<Duration>empty()
            : Optional.of(Duration.ofSeconds(s))),
        Arbitraries.integers().between(1, 5), Arbitraries.of(Overlap.class)).as(Policy::new);
    Arbitrary<Step> step = Combinators.combine(
        Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(6, Arbitraries.longs().between(0, 1500)),
            net.jqwik.api.Tuple.of(1, Arbitraries.longs().between(1500, 60_000))),
        Arbitraries.integers().between(0, 2)).as(Step::new);
    return Combinators.combine(period, policy, step.list().ofMinSize(1).ofMaxSize(60)).as(History::new);
  }

  @Property(tries = 2000)
  void everyPassFollowsThePolicies_andThePassesDecideEachSlotOnce(@ForAll("histories") History h) {
    Schedule schedule = Schedule.fixedRate(Duration.ofSeconds(h.periodSeconds()));
    Policy p = h.policy();
    Instant after = T0;
    Instant now = T0;
    List<RunSpan> spans = new ArrayList<>();
    List<Instant> decided = new ArrayList<>();
    for (Step step : h.steps()) {
      now = now.plusMillis(step.advanceMillis());
      boolean running = !spans.isEmpty() && spans.get(spans.size() - 1).end() == null;
      if (step.runEvent() == 1 && !running) {
        spans.add(new RunSpan(now, null));
      } else if (step.runEvent() == 2 && running) {
        spans.set(spans.size() - 1, new RunSpan(spans.get(spans.size() - 1).start(), now));
      }
      List<Decision> pass = SlotPlanner.plan(schedule, p, after, now, List.copyOf(spans));
      checkPass(schedule, p, after, now, spans, pass);
      if (!pass.isEmpty()) {
        after = pass.get(pass.size() - 1).slot();
      }
      pass.forEach(d -> decided.add(d.slot()));
    }
    // the rest, as a loop that catches up after its last step would: passes cut at MAX_SCAN go on
    List<Decision> pass;
    while (!(pass = SlotPlanner.plan(schedule, p, after, now, spans)).isEmpty()) {
      checkPass(schedule, p, after, now, spans, pass);
      after = pass.get(pass.size() - 1).slot();
      pass.forEach(d -> decided.add(d.slot()));
    }
    List<Instant> expected = new ArrayList<>();
    for (Instant s = schedule.next(T0).orElseThrow(); !s.isAfter(now); s = schedule.next(s).orElseThrow()) {
      expected.add(s);
    }
    assertThat(decided).as("every slot due decided once, in order").isEqualTo(expected);
  }

  private static void checkPass(Schedule schedule, Policy p, Instant after, Instant now, List<RunSpan> spans,
      List<Decision> pass) {
    assertThat(pass.size()).isLessThanOrEqualTo(SlotPlanner.MAX_SCAN);
    boolean truncated = pass.size() == SlotPlanner.MAX_SCAN
        && !schedule.next(pass.get(pass.size() - 1).slot()).orElseThrow().isAfter(now);
    Instant previous = after;
    List<Integer> missed = new ArrayList<>();
    int catchUps = 0;
    int uncoveredOnTime = 0;
    for (int i = 0; i < pass.size(); i++) {
      Decision d = pass.get(i);
      assertThat(d.slot()).as("the next slot").isEqualTo(schedule.next(previous).orElseThrow());
      assertThat(d.slot()).as("due").isBeforeOrEqualTo(now);
      previous = d.slot();
      Duration lateness = SlotPlanner.lateness(schedule, p, d.slot());
      if (p.missedAfter().isPresent()) {
        assertThat(lateness).isEqualTo(p.missedAfter().get());
      } else {
        assertThat(lateness).as("default lateness: at most 10 s and the period")
            .isLessThanOrEqualTo(Task.DEFAULT_MISSED_AFTER).isLessThanOrEqualTo(Duration.ofSeconds(60))
            .isLessThanOrEqualTo(Duration.between(d.slot(), schedule.next(d.slot()).orElseThrow()));
      }
      boolean covered = spans.stream().anyMatch(s -> s.covers(d.slot()));
      boolean late = !d.slot().plus(lateness).isAfter(now);
      if (covered) {
        assertThat(d.action()).as("a slot that came during this node's run is an overlap")
            .isEqualTo(p.overlap() == Overlap.SKIP ? Action.SKIP_OVERLAP : Action.RUN);
      } else if (late) {
        assertThat(d.action()).as("a missed slot").isIn(Action.SKIP_MISSED, Action.CATCH_UP);
        missed.add(i);
        if (d.action() == Action.CATCH_UP) {
          catchUps++;
        }
      } else {
        assertThat(d.action()).as("an on-time slot runs").isEqualTo(Action.RUN);
        uncoveredOnTime++;
      }
    }
    int expectedCatchUps = truncated ? 0 : switch (p.missedSlots()) {
      case SKIP -> 0;
      case RUN_ONCE -> Math.min(1, missed.size());
      case RUN_EACH -> Math.min(p.catchUpLimit(), missed.size());
    };
    assertThat(catchUps).as("catch-up runs of the pass (" + p.missedSlots() + ")").isEqualTo(expectedCatchUps);
    for (int k = 0; k < missed.size(); k++) { // the catch-ups are the newest missed slots
      boolean newest = k >= missed.size() - expectedCatchUps;
      assertThat(pass.get(missed.get(k)).action()).isEqualTo(newest ? Action.CATCH_UP : Action.SKIP_MISSED);
    }
    if (p.missedAfter().isEmpty()) {
      assertThat(uncoveredOnTime).as("no burst of old slots with the default lateness").isLessThanOrEqualTo(1);
    }
  }

  /** Slots that waited behind another node's run, decided again once the lock is free. */
  record Wait(long periodSeconds, Policy policy, long otherStartMillis, long otherLengthMillis, boolean endRecorded,
      long freedMillis, long ownStartMillis, long ownLengthMillis) {}

  @Provide
  Arbitrary<Wait> waits() {
    Arbitrary<Policy> policy = Combinators.combine(Arbitraries.of(MissedSlots.class),
        Arbitraries.longs().between(0, 30).map(s -> s == 0 ? Optional.<Duration>empty()
            : Optional.of(Duration.ofSeconds(s))),
        Arbitraries.integers().between(1, 5), Arbitraries.of(Overlap.class)).as(Policy::new);
    return Combinators.combine(Arbitraries.of(1L, 2L, 3L, 10L, 60L), policy,
        Arbitraries.longs().between(-60_000, 60_000), Arbitraries.longs().between(0, 120_000),
        Arbitraries.of(true, false), Arbitraries.longs().between(0, 180_000),
        Arbitraries.longs().between(-60_000, 60_000), Arbitraries.longs().between(-1, 30_000))
        .as((period, p, os, ol, rec, freed, ms, ml) -> new Wait(period, p, os, ol, rec, freed, ms, ml));
  }

  /**
   * Review of issue 14 (a stalled runner): once the lock is free, the slots that waited are decided
   * as every pass decides slots (overlaps, missed, on time), where another node's run counts as
   * covering only with the end its runner recorded; a run whose end nobody recorded never makes a
   * slot an overlap, and no slot found later than its lateness runs as scheduled unless a run covered
   * it under {@link Overlap#QUEUE}.
   */
  @Property(tries = 3000)
  void afterAWait_theSlotsGoBackThroughThePolicies(@ForAll("waits") Wait w) {
    Schedule schedule = Schedule.fixedRate(Duration.ofSeconds(w.periodSeconds()));
    Policy p = w.policy();
    Instant otherStart = T0.plusMillis(w.otherStartMillis());
    Instant otherEnd = otherStart.plusMillis(w.otherLengthMillis());
    Instant now = T0.plusMillis(Math.max(w.freedMillis(), w.otherStartMillis() + w.otherLengthMillis()));
    SlotPlanner.OtherRun other = new SlotPlanner.OtherRun(otherStart,
        w.endRecorded() ? Optional.of(otherEnd) : Optional.empty());
    List<RunSpan> own = w.ownLengthMillis() < 0 ? List.of()
        : List.of(new RunSpan(T0.plusMillis(w.ownStartMillis()), T0.plusMillis(w.ownStartMillis() + w.ownLengthMillis())));
    Instant after = T0;
    List<RunSpan> counted = new ArrayList<>(own);
    counted.addAll(SlotPlanner.covering(List.of(other)));
    List<Decision> all = new ArrayList<>();
    List<Decision> pass;
    boolean first = true;
    while (!(pass = first ? SlotPlanner.afterWait(schedule, p, after, now, own, List.of(other))
        : SlotPlanner.plan(schedule, p, after, now, counted)).isEmpty()) {
      first = false;
      checkPass(schedule, p, after, now, counted, pass);
      after = pass.get(pass.size() - 1).slot();
      all.addAll(pass);
    }
    for (Decision d : all) {
      boolean coveredByOwn = own.stream().anyMatch(s -> s.covers(d.slot()));
      if (!w.endRecorded() && !coveredByOwn) {
        assertThat(d.action()).as("a run without a recorded end covers nothing").isNotEqualTo(Action.SKIP_OVERLAP);
      }
      boolean late = !d.slot().plus(SlotPlanner.lateness(schedule, p, d.slot())).isAfter(now);
      boolean covered = counted.stream().anyMatch(s -> s.covers(d.slot()));
      if (late && d.action() == Action.RUN) {
        assertThat(covered && p.overlap() == Overlap.QUEUE).as("a late slot runs as scheduled only as a queued overlap")
            .isTrue();
      }
    }
  }
}
