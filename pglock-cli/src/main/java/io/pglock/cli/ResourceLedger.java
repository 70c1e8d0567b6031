package io.pglock.cli;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The demo's in-memory record of the shared resources, kept independently of the locks so that it
 * can prove what they guarantee: how many workers are inside each resource's critical section right
 * now (an {@link AtomicInteger} per resource; more than one is an overlap), and which resources
 * were processed in the current round, and how often.
 *
 * <p>Thread-safe. {@link #startRound} must not run while a worker is inside a critical section.
 */
final class ResourceLedger {
  private final List<String> resources;
  private final Map<String, AtomicInteger> inFlight = new LinkedHashMap<>();
  private final AtomicInteger overlaps = new AtomicInteger();
  private final AtomicInteger maxInFlight = new AtomicInteger();
  private final List<Map<String, Integer>> rounds = Collections.synchronizedList(new ArrayList<>());
  private volatile Map<String, Integer> current;

  ResourceLedger(List<String> resources) {
    this.resources = List.copyOf(resources);
    for (String r : this.resources) {
      inFlight.put(r, new AtomicInteger());
    }
  }

  /** The resources, in their list order. */
  List<String> resources() {
    return resources;
  }

  /** Opens a new round: nothing is processed in it yet. */
  void startRound() {
    Map<String, Integer> round = new ConcurrentHashMap<>();
    rounds.add(round);
    current = round;
  }

  /** A worker entered the resource's critical section; counts an overlap if another is inside. */
  void enter(String resource) {
    int now = inFlight.get(resource).incrementAndGet();
    maxInFlight.accumulateAndGet(now, Math::max);
    if (now > 1) {
      overlaps.incrementAndGet();
    }
  }

  /** A worker left the resource's critical section. */
  void exit(String resource) {
    inFlight.get(resource).decrementAndGet();
  }

  /** Whether the resource was already processed in the current round. */
  boolean doneThisRound(String resource) {
    return current.containsKey(resource);
  }

  /** Records that the resource was processed in the current round. */
  void processed(String resource) {
    current.merge(resource, 1, Integer::sum);
  }

  /** How many times a worker entered a critical section another worker was inside. */
  int overlaps() {
    return overlaps.get();
  }

  /** The most workers ever inside one resource's critical section at once. */
  int maxInFlight() {
    return maxInFlight.get();
  }

  /** For each round so far: how many distinct resources were processed. */
  List<Integer> distinctProcessedPerRound() {
    synchronized (rounds) {
      return rounds.stream().map(Map::size).toList();
    }
  }

  /** For each round so far: how many resources were processed more than once. */
  List<Integer> processedTwicePerRound() {
    synchronized (rounds) {
      return rounds.stream().map(m -> (int) m.values().stream().filter(n -> n > 1).count()).toList();
    }
  }

  /** The resources not processed in the current round, in list order. */
  List<String> missedThisRound() {
    return resources.stream().filter(r -> !current.containsKey(r)).toList();
  }
}
