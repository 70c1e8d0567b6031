package io.pglock.bench;

import java.io.File;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** B9's report: the comparison rows with pglock's goals, the table for the docs, and the notes. */
final class B9Report {
  private B9Report() {}

  /** What the run was: its length, faults, window and fleets. */
  record Run(Duration length, Duration killInterval, FaultPlan plan, Instant from, Instant to, List<String> timeline,
      File log, SlotFleet pglock, SlotFleet shedlock) {}

  static Report of(B9ScheduledSlots b, Run run, SlotCount p, SlotCount s) {
    Report r = new Report(b.id(), b.title());
    int skipped = p.neverSkipped();
    double p50 = percentile(p.lateMillis(), 0.5);
    r.limit(Report.fmt("slots run exactly once, of %d", p.slots()), "ShedLock " + s.once(),
        Report.fmt("%d (+%d skipped by design)", p.once(), skipped), "all but recorded skips",
        p.once() + skipped == p.slots());
    r.limit("slots run twice or more", "ShedLock " + s.twice(), Integer.toString(p.twice()), "0", p.twice() == 0);
    String cut = p.neverCut() == 0 ? "" : Report.fmt(", %d cut mid-run by a fault", p.neverCut());
    r.limit("slots never run", "ShedLock " + s.never(), Report.fmt("%d (%d recorded skipped%s)", p.never(), skipped,
        cut), "only recorded skips", p.never() == skipped);
    r.limit(Report.fmt("lateness p50 (p99, max), %d scheduled runs", p.lateMillis().length),
        "ShedLock " + lateness(s.lateMillis()), lateness(p.lateMillis()), Report.fmt("p50 <= %.0f ms",
            B9ScheduledSlots.GOAL_P50_MS), p.lateMillis().length > 0 && p50 <= B9ScheduledSlots.GOAL_P50_MS);
    r.info("runs started before their slot (database clock)", "ShedLock " + s.early(), Integer.toString(p.early()),
        "-");
    r.info("catch-up runs (after the restart)", "-", Integer.toString(p.catchUp()), "-");
    r.note("window: slots %s to %s (%d s of a %d s run with faults, less %d s warm-up and %d s cool-down); slot"
        + " label = pglock's RunContext.slot(), ShedLock's the whole second its node's clock fires for",
        run.from(), run.to(), p.slots(), run.length().toSeconds(), B9ScheduledSlots.WARM_UP.toSeconds(),
        B9ScheduledSlots.COOL_DOWN.toSeconds());
    for (String line : Report.render(new String[] {"system", "slots", "once", "twice or more", "never",
        "of them skipped by design", "catch-up runs", "started early", "lateness p50", "p99", "max"},
        List.of(tableRow("pglock", p, skipped), tableRow("ShedLock", s, 0))).split("\n")) {
      r.note("%s", line);
    }
    r.note("lateness: pglock, task_run.started_at (the claim's now()) - slot over scheduled runs (not catch-up);"
        + " ShedLock, the run's clock_timestamp() - its label, over every run (a node whose clock is ahead fires"
        + " early)");
    r.note("faults (seed %d, a kill every %d s +-20%%, replacement %d s later; the same node position in both fleets;"
        + " position %d always %d s ahead):", run.plan().seed(), run.killInterval().toSeconds(),
        FaultPlan.REPLACE_AFTER.toSeconds(), SlotFleet.SKEWED_POSITION, SlotFleet.SKEW.toSeconds());
    run.timeline().forEach(line -> r.note("  %s", line));
    details(r, "pglock", p, run.pglock());
    details(r, "ShedLock", s, run.shedlock());
    r.note("pglock: %s", PglockTicker.settings());
    r.note("ShedLock: %s", ShedLockTicker.settings());
    r.note("both: every node a JVM of its own (-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx128m), runs write"
        + " through a HikariCP pool of %d with ON CONFLICT on a run id (a retried write counts once)",
        SlotNodeMain.POOL_SIZE);
    return r;
  }

  private static String[] tableRow(String system, SlotCount c, int skipped) {
    boolean pglock = system.equals("pglock");
    return new String[] {system, Integer.toString(c.slots()), Integer.toString(c.once()), Integer.toString(c.twice()),
        Integer.toString(c.never()), pglock ? Integer.toString(skipped) : "-",
        pglock ? Integer.toString(c.catchUp()) : "-", Integer.toString(c.early()),
        ms(percentile(c.lateMillis(), 0.5)), ms(percentile(c.lateMillis(), 0.99)), ms(percentile(c.lateMillis(), 1.0))};
  }

  private static void details(Report r, String system, SlotCount c, SlotFleet fleet) {
    r.note("%s: runs by node %s", system, c.runsByNode());
    if (!c.neverStates().isEmpty()) {
      r.note("  never run, by what task_run says: %s", c.neverStates());
    }
    if (c.neverCut() > 0) {
      r.note("  cut mid-run: the slot started once and the fault (a kill or the crash) ended its run before the"
          + " run's write landed; pglock runs such a slot again only with retryDisconnected > 1 (here 1)");
    }
    if (c.never() > 0) {
      r.note("  never run: %s", c.neverRuns());
    }
    if (!c.doubles().isEmpty()) {
      r.note("  run twice or more (first %d): %s", c.doubles().size(), c.doubles());
    }
    int errors = fleet.errorLines();
    if (errors > 0) {
      r.note("  %d ERROR line(s) from its nodes, first: %s", errors, fleet.firstErrors(3));
    }
    for (String problem : fleet.problems()) {
      r.note("  problem: %s", problem);
    }
  }

  private static String lateness(double[] v) {
    return v.length == 0 ? "-" : Report.fmt("%s (%s, %s)", ms(percentile(v, 0.5)), ms(percentile(v, 0.99)),
        ms(percentile(v, 1.0)));
  }

  private static double percentile(double[] v, double p) {
    return v.length == 0 ? Double.NaN : LossLatency.percentile(v, p);
  }

  private static String ms(double millis) {
    return Double.isNaN(millis) ? "-" : B5LossDetection.ms(millis);
  }
}
