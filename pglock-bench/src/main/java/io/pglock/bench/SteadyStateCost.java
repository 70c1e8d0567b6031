package io.pglock.bench;

import java.io.File;
import java.sql.Connection;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What a standing election asks of the database when nothing happens: a fresh fleet, once ready,
 * counts in each contender (client side, {@link CountingDataSource}) the statements and transaction
 * ends over a window, for the leader and per standby. Counting on the client sees every statement,
 * which sampling {@code pg_stat_activity} does not at ten a second.
 */
final class SteadyStateCost {
  /** Rates per second: statements ({@code execute*}) and commits or rollbacks, leader and mean standby. */
  record Cost(double leaderStatements, double leaderEnds, double standbyStatements, double standbyEnds,
      double seconds) {}

  private SteadyStateCost() {}

  static Cost measure(ElectionSide side, Db db, File log, Duration window) throws Exception {
    try (Connection monitor = db.connect(db.runPrefix + "-b8-monitor"); Fleet fleet = new Fleet(side, db, log)) {
      fleet.awaitReady(monitor, FailoverTrials.READY_TIMEOUT, new java.util.ArrayList<>());
      Contender leader = fleet.leader();
      Map<Contender, long[]> before = counts(fleet);
      // the window is the measurement itself, not a wait for something to happen
      LossLatency.parkFor(window.toNanos());
      Map<Contender, long[]> after = counts(fleet);
      if (fleet.leader() != leader) {
        throw new IllegalStateException("the leader changed during the steady-state window");
      }
      double ls = 0;
      double le = 0;
      double ss = 0;
      double se = 0;
      int standbys = 0;
      for (Contender c : fleet.members()) {
        long[] b = before.get(c);
        long[] a = after.get(c);
        double seconds = (a[2] - b[2]) / 1e9;
        double st = (a[0] - b[0]) / seconds;
        double en = (a[1] - b[1]) / seconds;
        if (c == leader) {
          ls = st;
          le = en;
        } else {
          ss += st;
          se += en;
          standbys++;
        }
      }
      return new Cost(ls, le, ss / standbys, se / standbys, window.toNanos() / 1e9);
    }
  }

  /** Each contender's counts now: executes, ends, and its time. */
  private static Map<Contender, long[]> counts(Fleet fleet) throws InterruptedException {
    Map<Contender, long[]> counts = new HashMap<>();
    List<Contender> members = fleet.members();
    int mark = fleet.events.mark();
    for (Contender c : members) {
      c.send("COUNT");
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    for (Contender c : members) {
      Optional<FleetEvent> e = fleet.events.await(mark, ev -> ev.who() == c && ev.is("COUNT"), deadline);
      if (e.isEmpty()) {
        throw new IllegalStateException(c + " did not answer COUNT within 5 s");
      }
      String[] w = e.get().detail().split(" ");
      counts.put(c, new long[] {Long.parseLong(w[0]), Long.parseLong(w[1]), e.get().nanos()});
    }
    return counts;
  }
}
