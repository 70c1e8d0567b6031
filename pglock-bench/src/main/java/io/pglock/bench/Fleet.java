package io.pglock.bench;

import java.io.File;
import java.io.IOException;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The contenders of one election of one {@link ElectionSide}: three JVMs, each a node of its own. A
 * contender that is killed or leaves is replaced by a fresh one, so that there are always three.
 * Names are unique to the run: the election {@code b8-<pid>-f<n>}, the nodes {@code <run>-b8f<n>c<k>}.
 *
 * <p>The first three start one after the other, each once the one before stands: a dozen JVMs
 * starting at once on a small, busy machine starve each other past the libraries' connect timeouts.
 * A contender that exits without being told to (it could not connect, say) is replaced while the
 * fleet waits to be ready, at most {@value #MAX_RESTARTS} times per wait, and reported.
 */
final class Fleet implements AutoCloseable {
  static final int SIZE = 3;
  static final int MAX_RESTARTS = 3;
  static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final AtomicInteger IDS = new AtomicInteger();

  final String election;
  /** Every node name of this fleet starts with this (and names no other fleet's node). */
  final String nodePrefix;
  final FleetEvents events = new FleetEvents();
  private final ElectionSide side;
  private final Db db;
  private final File log;
  private final List<Contender> members = new ArrayList<>();
  private int joined;

  Fleet(ElectionSide side, Db db, File log) throws IOException, InterruptedException {
    int id = IDS.incrementAndGet();
    this.side = side;
    this.db = db;
    this.log = log;
    this.election = "b8-" + ProcessHandle.current().pid() + "-f" + id;
    this.nodePrefix = db.runPrefix + "-b8f" + id + "c";
    for (int i = 0; i < SIZE; i++) {
      int mark = events.mark();
      Contender c = join();
      try {
        events.await(mark, e -> e.who() == c && (e.is("STANDING") || e.is("EXITED")),
            System.nanoTime() + START_TIMEOUT.toNanos());
      } catch (InterruptedException e) {
        close();
        throw e;
      }
    }
  }

  /** Starts one more contender. */
  synchronized Contender join() throws IOException {
    String node = nodePrefix + (++joined);
    Contender c = Contender.start(node, side.contenderArgs(election, node), db.options().password(), log, events);
    members.add(c);
    return c;
  }

  /** Replaces a contender that is gone (killed, or left) by a fresh one. */
  synchronized void replace(Contender gone) throws IOException {
    members.remove(gone);
    join();
  }

  synchronized List<Contender> members() {
    return new ArrayList<>(members);
  }

  synchronized int size() {
    return members.size();
  }

  /** {@return the one contender that says it leads, or null if none or more than one does} */
  synchronized Contender leader() {
    Contender leader = null;
    for (Contender c : members) {
      if (c.leading()) {
        if (leader != null) {
          return null;
        }
        leader = c;
      }
    }
    return leader;
  }

  synchronized List<Contender> standbys() {
    List<Contender> s = new ArrayList<>();
    for (Contender c : members) {
      if (!c.leading()) {
        s.add(c);
      }
    }
    return s;
  }

  /**
   * Waits until one contender leads, every contender stands, and the side sees the standbys in line:
   * the state in which a trial's fault is injected.
   *
   * @throws IllegalStateException if that does not happen within the timeout
   */
  void awaitReady(Connection monitor, Duration timeout, List<String> problems) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    int restarts = 0;
    while (true) {
      for (Contender gone : exited()) {
        if (++restarts > MAX_RESTARTS) {
          throw new IllegalStateException("fleet " + election + ": contenders keep exiting; last events "
              + tail(events.since(Math.max(0, events.mark() - 8))));
        }
        problems.add("contender " + gone + " exited unasked (" + lastError(gone) + "): replaced");
        replace(gone);
      }
      Contender leader = leader();
      boolean allStanding;
      synchronized (this) {
        allStanding = members.size() == SIZE && members.stream().allMatch(Contender::standing);
      }
      if (leader != null && allStanding && side.standbysInLine(this, monitor)) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("fleet " + election + " not ready within " + timeout + ": leader " + leader
            + ", members " + members + ", standing " + allStanding + "; last events "
            + tail(events.since(Math.max(0, events.mark() - 8))));
      }
      // the side's view (pg_locks, ZooKeeper) has no notification: look again shortly
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
    }
  }

  /** Members that exited though nobody killed them or told them to leave. */
  private synchronized List<Contender> exited() {
    List<Contender> gone = new ArrayList<>();
    for (Contender c : members) {
      if (!c.isAlive()) {
        gone.add(c);
      }
    }
    return gone;
  }

  private String lastError(Contender c) {
    String last = "no error printed";
    for (FleetEvent e : events.since(0)) {
      if (e.who() == c && e.is("ERROR")) {
        last = e.detail();
      }
    }
    return last;
  }

  private static String tail(List<FleetEvent> es) {
    StringBuilder b = new StringBuilder();
    for (FleetEvent e : es) {
      b.append(b.length() == 0 ? "" : "; ").append(e.who().node).append(' ').append(e.kind()).append(' ')
          .append(e.detail());
    }
    return b.toString();
  }

  /** Ends every contender (bounded: see {@link Contender#stop()}); interrupted, it kills the rest at once. */
  @Override
  public void close() {
    List<Contender> all;
    synchronized (this) {
      all = new ArrayList<>(members);
      members.clear();
    }
    Contender.stopAll(all);
  }
}
