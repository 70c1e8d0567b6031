package io.pglock.bench;

import java.io.File;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * B8's trials of one fault on one {@link ElectionSide}: in each, a ready fleet (one leader, two
 * standbys in line) idles a random 300-600 ms, the fault hits the leader, and the failover time is
 * the new leader's {@code ELECTED} time minus the parent's {@link System#nanoTime()} just before the
 * fault. Faults whose failover takes seconds by design run on several fleets at once, each with its
 * share of the trials, so that a run at default settings stays within minutes; the figures are
 * timer-driven there, so the fleets disturb each other by milliseconds at most.
 */
final class FailoverTrials {
  /** From this expected failover on, trials run on several fleets at once. */
  static final Duration PARALLEL_FROM = Duration.ofSeconds(4);
  static final int MAX_FLEETS = 4;
  static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
  static final Duration AFTERMATH_TIMEOUT = Duration.ofSeconds(15);

  /** How a trial ended. */
  enum Outcome {
    /** another node was elected */
    OTHER,
    /** the same node was elected again (it lost its term and took the lock back) */
    SAME,
    /** no new term: the leader kept leading without a revocation (its library reconnected) */
    KEPT,
    /** no leader elected before the trial's timeout */
    TIMEOUT
  }

  /**
   * One trial.
   *
   * @param millis fault to ELECTED (infinite for KEPT and TIMEOUT)
   * @param oldLeaderEvent what the old leader said after the fault (after SIGCONT for a pause), or ""
   * @param oldLeaderMillis when it said it: after SIGCONT for a pause, after the fault otherwise; NaN if never
   */
  record Trial(double millis, Outcome outcome, String oldLeaderEvent, double oldLeaderMillis) {}

  /** All trials of a fault, with the problems met (errors of contenders, fleets not ready). */
  record Result(List<Trial> trials, List<String> problems, int fleets) {
    double[] millis() {
      return trials.stream().filter(t -> t.outcome == Outcome.OTHER || t.outcome == Outcome.SAME)
          .mapToDouble(Trial::millis).toArray();
    }

    long count(Outcome o) {
      return trials.stream().filter(t -> t.outcome == o).count();
    }
  }

  private final ElectionSide side;
  private final Fault fault;
  private final Db db;
  private final File log;

  FailoverTrials(ElectionSide side, Fault fault, Db db, File log) {
    this.side = side;
    this.fault = fault;
    this.db = db;
    this.log = log;
  }

  Result run(int trials) throws Exception {
    int fleets = side.expected(fault).compareTo(PARALLEL_FROM) >= 0 ? Math.min(MAX_FLEETS, trials) : 1;
    List<Trial> all = Collections.synchronizedList(new ArrayList<>());
    List<String> problems = Collections.synchronizedList(new ArrayList<>());
    List<Fleet> started = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(fleets);
    try {
      // fleets start one after the other (see Fleet), then run their trials side by side
      for (int f = 0; f < fleets; f++) {
        started.add(new Fleet(side, db, log));
      }
      List<Future<?>> done = new ArrayList<>();
      for (int f = 0; f < fleets; f++) {
        int share = trials / fleets + (f < trials % fleets ? 1 : 0);
        Fleet fleet = started.get(f);
        done.add(pool.submit(() -> {
          runFleet(fleet, share, all, problems);
          return null;
        }));
      }
      for (Future<?> d : done) {
        d.get();
      }
    } finally {
      pool.shutdownNow();
      pool.awaitTermination(1, TimeUnit.MINUTES);
      for (Fleet f : started) {
        f.close();
      }
    }
    return new Result(new ArrayList<>(all), new ArrayList<>(problems), fleets);
  }

  private void runFleet(Fleet fleet, int trials, List<Trial> out, List<String> problems) throws Exception {
    try (Connection monitor = db.connect(db.runPrefix + "-b8-monitor")) {
      for (int i = 0; i < trials; i++) {
        int mark = fleet.events.mark();
        try {
          out.add(trial(fleet, monitor, problems));
        } finally {
          for (FleetEvent e : fleet.events.since(mark)) {
            if (e.is("ERROR")) {
              problems.add(e.who().node + ": " + e.detail());
            }
          }
        }
      }
    }
  }

  private Trial trial(Fleet fleet, Connection monitor, List<String> problems) throws Exception {
    fleet.awaitReady(monitor, READY_TIMEOUT, problems);
    // a random phase against every periodic loop (heartbeats, polls, pings): a fixed idle time would
    // always hit the same point of their periods and measure that point, not the distribution
    LossLatency.parkFor(TimeUnit.MILLISECONDS.toNanos(300 + ThreadLocalRandom.current().nextInt(300)));
    Contender leader = fleet.leader();
    if (leader == null) {
      throw new IllegalStateException("fleet " + fleet.election + " lost its leader before the fault");
    }
    List<Integer> backends = fault == Fault.TERMINATE ? side.backendsToTerminate(leader, monitor) : List.of();
    if (fault == Fault.TERMINATE && backends.isEmpty()) {
      throw new IllegalStateException("no backend of the leader " + leader + " to terminate");
    }
    int mark = fleet.events.mark();
    long t0 = System.nanoTime();
    switch (fault) {
      case CLEAN -> leader.send("LEAVE");
      case SIGKILL -> leader.kill();
      case TERMINATE -> terminate(monitor, backends);
      case PAUSE -> leader.pause();
    }
    long deadline = t0 + side.timeout(fault).toNanos();
    Optional<FleetEvent> elected = fleet.events.await(mark,
        e -> e.is("ELECTED") && (e.who() != leader || fault == Fault.TERMINATE), deadline);
    if (elected.isEmpty() && fault == Fault.TERMINATE
        && fleet.events.since(mark).stream().anyMatch(e -> e.who() == leader && e.is("REVOKED"))) {
      // the leader lost its term: its successor may have to wait for the lock to expire
      elected = fleet.events.await(mark, e -> e.is("ELECTED"), t0 + side.timeout(Fault.SIGKILL).toNanos());
    }
    Outcome outcome = elected.isEmpty() ? Outcome.TIMEOUT : elected.get().who() == leader ? Outcome.SAME
        : Outcome.OTHER;
    double millis = elected.isEmpty() ? Double.POSITIVE_INFINITY : (elected.get().nanos() - t0) / 1e6;
    if (outcome == Outcome.TIMEOUT && fault == Fault.TERMINATE && stillLeads(fleet, leader)) {
      outcome = Outcome.KEPT;
    }
    return aftermath(fleet, leader, mark, t0, millis, outcome);
  }

  /** The event's keyword and first word (REVOKED LEASE_EXPIRED), without its time. */
  private static String word(FleetEvent e) {
    String[] w = e.detail().split(" ");
    return e.kind() + (w.length > 1 ? " " + w[0] : "");
  }

  private static void terminate(Connection monitor, List<Integer> pids) throws Exception {
    try (PreparedStatement ps = monitor.prepareStatement("SELECT pg_terminate_backend(?)")) {
      for (int pid : pids) {
        ps.setInt(1, pid);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
        }
      }
    }
  }

  /** Asks the leader whether it leads (CHECK), waiting at most 5 s for the answer. */
  private static boolean stillLeads(Fleet fleet, Contender leader) throws InterruptedException {
    int mark = fleet.events.mark();
    if (!leader.send("CHECK")) {
      return false;
    }
    Optional<FleetEvent> answer = fleet.events.await(mark, e -> e.who() == leader && e.is("LEADER"),
        System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
    return answer.isPresent() && answer.get().detail().startsWith("true");
  }

  /** Brings the fleet back to three contenders and records what the old leader said. */
  private Trial aftermath(Fleet fleet, Contender leader, int mark, long t0, double millis, Outcome outcome)
      throws Exception {
    long aftermathDeadline = System.nanoTime() + AFTERMATH_TIMEOUT.toNanos();
    switch (fault) {
      case CLEAN, SIGKILL -> {
        if (!leader.awaitExit(AFTERMATH_TIMEOUT)) {
          leader.kill();
          leader.awaitExit(AFTERMATH_TIMEOUT);
        }
        fleet.replace(leader);
        Optional<FleetEvent> said = fleet.events.since(mark).stream()
            .filter(e -> e.who() == leader && (e.is("REVOKED") || e.is("LEFT"))).findFirst();
        return new Trial(millis, outcome, said.map(FailoverTrials::word).orElse(""),
            said.map(e -> (e.nanos() - t0) / 1e6).orElse(Double.NaN));
      }
      case PAUSE -> {
        int resumeMark = fleet.events.mark();
        long resumedAt = System.nanoTime();
        leader.resume();
        // a paused leader must learn it lost its term before it acts as leader: its first word
        Optional<FleetEvent> first = fleet.events.await(resumeMark,
            e -> e.who() == leader && (e.is("REVOKED") || e.is("ELECTED") || e.is("EXITED")), aftermathDeadline);
        if (first.isEmpty() || !first.get().is("REVOKED") || !side.revokedLeaderStandsAgain()) {
          leader.kill();
          leader.awaitExit(AFTERMATH_TIMEOUT);
          fleet.replace(leader);
        }
        return new Trial(millis, outcome, first.map(FailoverTrials::word).orElse("nothing"),
            first.map(e -> (e.nanos() - resumedAt) / 1e6).orElse(Double.NaN));
      }
      default -> {
        Optional<FleetEvent> said = fleet.events.await(mark, e -> e.who() == leader && e.is("REVOKED"),
            outcome == Outcome.KEPT ? System.nanoTime() : aftermathDeadline);
        if (said.isPresent() && !side.revokedLeaderStandsAgain()) {
          leader.kill();
          leader.awaitExit(AFTERMATH_TIMEOUT);
          fleet.replace(leader);
        }
        return new Trial(millis, outcome, said.map(FailoverTrials::word).orElse(""),
            said.map(e -> (e.nanos() - t0) / 1e6).orElse(Double.NaN));
      }
    }
  }
}
