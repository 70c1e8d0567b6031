package io.pglock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The events of one fleet's contenders, in the order the parent read them. Waiting for an event is
 * a wait on this object's monitor with a deadline, woken by every new event.
 */
final class FleetEvents {
  private final List<FleetEvent> events = new ArrayList<>();

  synchronized void add(FleetEvent e) {
    events.add(e);
    notifyAll();
  }

  /** {@return the index the next event will have: pass it to {@link #await} to see only later ones} */
  synchronized int mark() {
    return events.size();
  }

  /**
   * The first event from index {@code from} on that matches, waiting for it until the deadline.
   *
   * @param deadline a {@link System#nanoTime()} value
   * @return the event, or empty if none matched by the deadline
   */
  synchronized Optional<FleetEvent> await(int from, Predicate<FleetEvent> match, long deadline)
      throws InterruptedException {
    int i = from;
    while (true) {
      for (; i < events.size(); i++) {
        if (match.test(events.get(i))) {
          return Optional.of(events.get(i));
        }
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return Optional.empty();
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }

  /** {@return the events from index {@code from} on} */
  synchronized List<FleetEvent> since(int from) {
    return new ArrayList<>(events.subList(Math.min(from, events.size()), events.size()));
  }
}
