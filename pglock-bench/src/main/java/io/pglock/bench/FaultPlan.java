package io.pglock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

/**
 * B9's faults, drawn from a seed so that a run can be repeated, and the same for both fleets: every
 * {@code interval} (±20%) the node at a random position is SIGKILLed in each fleet and a fresh one
 * started {@link #REPLACE_AFTER} later; once, halfway between two kills near the middle of the run,
 * the server restarts. No kill comes in the last {@code quietEnd} of the run. The positions come in
 * shuffled rounds of all three, so that every node, the skewed one too, dies once in any three
 * kills in a row, short runs included.
 */
record FaultPlan(long seed, List<Step> steps) {
  static final Duration REPLACE_AFTER = Duration.ofSeconds(2);

  enum Kind { KILL, START, RESTART_SERVER }

  /**
   * One fault or repair.
   *
   * @param at from the start of the measured run
   * @param position the node's position in each fleet (0 for the server)
   */
  record Step(Duration at, Kind kind, int position) {}

  static FaultPlan draw(long seed, Duration run, Duration interval, Duration quietEnd) {
    Random random = new Random(seed);
    List<Step> steps = new ArrayList<>();
    List<Duration> kills = new ArrayList<>();
    Duration at = jittered(interval, random);
    List<Integer> round = new ArrayList<>();
    while (at.plus(REPLACE_AFTER).compareTo(run.minus(quietEnd)) <= 0) {
      if (round.isEmpty()) {
        for (int p = 1; p <= SlotFleet.SIZE; p++) {
          round.add(p);
        }
        Collections.shuffle(round, random);
      }
      int position = round.remove(0);
      steps.add(new Step(at, Kind.KILL, position));
      steps.add(new Step(at.plus(REPLACE_AFTER), Kind.START, position));
      kills.add(at);
      at = at.plus(jittered(interval, random));
    }
    steps.add(new Step(restartTime(run, kills), Kind.RESTART_SERVER, 0));
    steps.sort(Comparator.comparing(Step::at));
    return new FaultPlan(seed, List.copyOf(steps));
  }

  /** Halfway between the replacement after the kill before the middle and the next kill. */
  private static Duration restartTime(Duration run, List<Duration> kills) {
    Duration middle = run.dividedBy(2);
    Duration from = Duration.ZERO;
    Duration to = run;
    for (Duration k : kills) {
      if (k.compareTo(middle) <= 0) {
        from = k.plus(REPLACE_AFTER);
      } else {
        to = k;
        break;
      }
    }
    return from.plus(to.minus(from).dividedBy(2));
  }

  private static Duration jittered(Duration interval, Random random) {
    return Duration.ofMillis((long) (interval.toMillis() * (0.8 + 0.4 * random.nextDouble())));
  }

  long kills() {
    return steps.stream().filter(s -> s.kind() == Kind.KILL).count();
  }
}
