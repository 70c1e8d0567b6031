package io.pglock.bench;

import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * B9: the three node JVMs ({@link SlotNodeMain}) of one system, by position 1 to 3; the node at
 * position {@value #SKEWED_POSITION} always runs with its clock {@link #SKEW} ahead, replacements
 * included. A node killed by the benchmark is replaced by {@link #start(int)}; one that exits unasked
 * is reported and replaced too. Node names: {@code b9-<system>-n<position>g<generation>}.
 */
final class SlotFleet implements AutoCloseable {
  static final int SIZE = 3;
  static final int SKEWED_POSITION = 3;
  static final Duration SKEW = Duration.ofSeconds(5);
  static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  /** Unasked exits replaced at most, per fleet: past that the run is broken, not faulty. */
  static final int MAX_UNASKED_EXITS = 3;

  final String system;
  final FleetEvents events = new FleetEvents();
  private final List<String> dbArgs;
  private final File log;
  private final Map<Integer, Contender> members = new TreeMap<>();
  private final List<String> problems = new ArrayList<>();
  private int generation;
  private int unaskedExits;

  SlotFleet(String system, List<String> dbArgs, File log) {
    this.system = system;
    this.dbArgs = dbArgs;
    this.log = log;
  }

  /** Starts the node at a position (empty, or its node killed) and returns without waiting for it. */
  synchronized Contender start(int position) throws IOException {
    String node = "b9-" + system + "-n" + position + "g" + (++generation);
    long skewMs = position == SKEWED_POSITION ? SKEW.toMillis() : 0;
    List<String> args = new ArrayList<>(dbArgs);
    args.addAll(List.of("system=" + system, "node=" + node, "skewMs=" + skewMs));
    Contender c = Contender.start(SlotNodeMain.class, node, args, null, log, events);
    members.put(position, c);
    return c;
  }

  /**
   * Starts the node at a position and waits until it says it runs the task.
   *
   * @throws IllegalStateException if it exits or stays silent past {@link #START_TIMEOUT}
   */
  void startAndAwait(int position) throws IOException, InterruptedException {
    int mark = events.mark();
    Contender c = start(position);
    FleetEvent e = events.await(mark, ev -> ev.who() == c && (ev.is("READY") || ev.is("EXITED")),
        System.nanoTime() + START_TIMEOUT.toNanos()).orElse(null);
    if (e == null || !e.is("READY")) {
      throw new IllegalStateException(system + " node " + c + " did not start within " + START_TIMEOUT.toSeconds()
          + " s: " + (e == null ? "no READY" : "it exited") + "; stderr in " + log);
    }
  }

  /** SIGKILL of the node at a position; it stays dead until {@link #start(int)}. */
  synchronized Contender kill(int position) {
    Contender c = members.remove(position);
    if (c != null) {
      c.kill();
    }
    return c;
  }

  /** Replaces nodes that exited though nobody killed or stopped them; each is a problem in the notes. */
  synchronized void replaceUnaskedExits() throws IOException {
    for (Map.Entry<Integer, Contender> m : new ArrayList<>(members.entrySet())) {
      if (m.getValue().isAlive()) {
        continue;
      }
      if (++unaskedExits > MAX_UNASKED_EXITS) {
        throw new IllegalStateException(system + " nodes keep exiting unasked; stderr in " + log);
      }
      problems.add(m.getValue() + " exited unasked: replaced");
      start(m.getKey());
    }
  }

  synchronized List<String> problems() {
    return new ArrayList<>(problems);
  }

  /** {@return how many ERROR lines the nodes printed (failed firings, failed starts)} */
  int errorLines() {
    return (int) events.since(0).stream().filter(e -> e.is("ERROR")).count();
  }

  /** The first ERROR lines, for the notes. */
  List<String> firstErrors(int max) {
    return events.since(0).stream().filter(e -> e.is("ERROR")).limit(max).map(e -> e.who().node + ": " + e.detail())
        .toList();
  }

  /** Tells every node to leave, then waits for each (bounded: see {@link Contender#stop()}). */
  @Override
  public void close() {
    List<Contender> all;
    synchronized (this) {
      all = new ArrayList<>(members.values());
      members.clear();
    }
    all.forEach(c -> c.send("LEAVE")); // all at once: each closes its scheduler while the others do
    Contender.stopAll(all);
  }
}
