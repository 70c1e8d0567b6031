package io.pglock.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.testing.Await;
import io.pglock.testing.PrivateServer;
import io.pglock.testing.ReplicatedPair;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 17, the scheduler: PostgreSQL fails over (a real primary and its streaming standby, the
 * primary killed with {@code pg_ctl stop -m immediate} and the standby promoted) under two scheduler
 * nodes, each on its own {@link PgLocks} over pgjdbc's multi-host URL, running two tasks every second:
 * {@code each} ({@link MissedSlots#RUN_EACH}, missed after 5 min, catch-up limit 100: the policy
 * that runs every slot it finds without a row) and {@code plain} (the defaults: {@link
 * MissedSlots#SKIP}, missed after the period). Each run is recorded in memory (the run rows are on
 * the server that dies).
 *
 * <p>Synchronous replication: every slot runs at most once across both nodes and the failover.
 * Asynchronous, cut on purpose a few slots before the failover (the worst case of lag): a slot whose
 * run row was committed only on the old primary (after the cut) may run again on the new one; a
 * slot whose row was replicated never does. How many: nodes that keep running do not look again at
 * a slot they have decided, so only the slot some node was still deciding at the kill ran again
 * (measured: one slot of one task in each run); a fleet that restarts with the failover (no node
 * remembers) decides every slot since the cut again, and the missed-slot policy bounds it: RUN_EACH
 * with a long {@code missedAfter} runs each again, SKIP with the default lateness only the newest.
 */
@org.junit.jupiter.api.Tag("faults") // real servers and processes failing; run on one JDK in CI (.ci/run)
class SchedulerFailoverTest {
  private static final Duration BACK = Duration.ofSeconds(120);
  private static final String NS = "sched-failover";

  record Run(String task, Instant slot, String node, RunKind kind, long at) {}

  /** A primary and its standby with pglock's schema, or the test skipped where they cannot run. */
  private static ReplicatedPair pair(boolean synchronous) throws Exception {
    try {
      return ReplicatedPair.start(synchronous, primary -> PgLockSchema.migrate(primary, PgLockSchema.DEFAULT_SCHEMA),
          "max_connections=60");
    } catch (PrivateServer.Unavailable e) {
      assumeTrue(false, "no private PostgreSQL servers here: " + e.getMessage());
      throw e; // not reached
    }
  }

  @ParameterizedTest(name = "synchronous replication: {0}")
  @ValueSource(booleans = {true, false})
  void failover_slotsOnceWithSync_rerunsOnlyAfterTheCutWithAsync(boolean synchronous) throws Exception {
    try (ReplicatedPair pair = pair(synchronous)) {
      DataSource ds = pair.dataSource("pglock-sched-failover-test");
      List<Run> runs = new CopyOnWriteArrayList<>();
      List<AutoCloseable> open = new ArrayList<>();
      try {
        for (String node : List.of("n1", "n2")) {
          startNode(ds, node, runs, open);
        }
        Await.until("3 runs of each task", BACK, () -> slots(runs, "each").size() >= 3 && slots(runs, "plain").size() >= 3);

        Instant lastReplicated = null;
        int runsAtCut = 0;
        if (!synchronous) {
          pair.awaitStandbyCaughtUp();
          pair.cutReplication();
          runsAtCut = runs.size();
          // the exact boundary: the newest run row the standby has (it receives nothing more)
          lastReplicated = newestSlot(pair.standby().dataSource("pglock-sched-failover-check"));
          int atCut = runs.size();
          Await.until("3 more runs of each task after the cut", BACK,
              () -> runs.stream().skip(atCut).filter(r -> r.task().equals("each")).count() >= 3
                  && runs.stream().skip(atCut).filter(r -> r.task().equals("plain")).count() >= 3);
        } else {
          int before = runs.size();
          Await.until("2 more runs of each task", BACK,
              () -> runs.stream().skip(before).filter(r -> r.task().equals("each")).count() >= 2);
        }

        int runsBeforeFailover = runs.size();
        ReplicatedPair.Failover failover = pair.failover();
        Await.until("runs of both tasks on the new primary", BACK, () -> runs.stream()
            .filter(r -> r.at() > failover.promotedAt()).map(Run::task).collect(Collectors.toSet()).size() == 2);
        long resumed = runs.stream().filter(r -> r.at() > failover.promotedAt()).mapToLong(Run::at).min().orElseThrow();
        // a few on-time slots on the new primary, so that catch-ups (RUN_EACH) have been decided
        Await.until("3 on-time runs of each task after the failover", BACK, () -> runs.stream()
            .filter(r -> r.at() > failover.promotedAt() && r.kind() == RunKind.SCHEDULED).count() >= 6);
        for (int i = open.size() - 1; i >= 0; i--) {
          open.get(i).close();
        }
        open.clear();

        Map<String, Map<Instant, List<Run>>> bySlot = new TreeMap<>();
        for (Run r : runs) {
          bySlot.computeIfAbsent(r.task(), k -> new TreeMap<>()).computeIfAbsent(r.slot(), k -> new ArrayList<>()).add(r);
        }
        StringBuilder summary = new StringBuilder();
        for (String task : List.of("each", "plain")) {
          Map<Instant, List<Run>> slots = bySlot.getOrDefault(task, Map.of());
          Set<Instant> twice = slots.entrySet().stream().filter(e -> e.getValue().size() > 1).map(Map.Entry::getKey)
              .collect(Collectors.toCollection(TreeSet::new));
          Instant boundary = lastReplicated;
          Set<Instant> ranOnOldAfterCut = boundary == null ? Set.of()
              : runs.subList(0, runsBeforeFailover).stream()
                  .filter(r -> r.task().equals(task) && r.slot().isAfter(boundary)).map(Run::slot)
                  .collect(Collectors.toCollection(TreeSet::new));
          long firstAfter = runs.stream().filter(r -> r.task().equals(task) && r.at() > failover.promotedAt())
              .mapToLong(Run::at).min().orElseThrow();
          summary.append(String.format("%n  %s: %d slots run, %d runs; slots run twice %d %s; slots run on the old"
                  + " primary after the cut %d %s; first run on the new primary %.0f ms after the promotion",
              task, slots.size(), slots.values().stream().mapToInt(List::size).sum(), twice.size(), twice,
              ranOnOldAfterCut.size(), ranOnOldAfterCut, ms(firstAfter - failover.promotedAt())));
          if (synchronous) {
            assertThat(twice).as("%s: slots run more than once with synchronous replication", task).isEmpty();
          } else {
            assertThat(twice).as("%s: slots run twice, only slots whose run row came after the cut (newest replicated"
                + " slot %s)", task, boundary).allMatch(slot -> slot.isAfter(boundary));
            assertThat(ranOnOldAfterCut).as("%s: slots run on the old primary after the cut", task).isNotEmpty();
          }
        }
        System.out.printf("scheduler failover (%s): runs resumed %.0f ms after the promotion (%.0f ms after the kill);"
                + " %d runs before the failover%s%s%n", synchronous ? "synchronous" : "asynchronous, cut",
            ms(resumed - failover.promotedAt()), ms(resumed - failover.killedAt()), runsBeforeFailover,
            lastReplicated == null ? "" : String.format("; newest slot on the standby at the cut %s (%d runs then)",
                lastReplicated, runsAtCut),
            summary);
        for (Run r : runs) {
          System.out.printf("  run %s %s %s %s %+.0f ms from the promotion%n", r.task(), r.slot(), r.node(), r.kind(),
              ms(r.at() - failover.promotedAt()));
        }
      } finally {
        for (int i = open.size() - 1; i >= 0; i--) {
          try {
            open.get(i).close();
          } catch (Exception e) {
            System.err.println("close: " + e);
          }
        }
      }
    }
  }

  /** A scheduler node on its own PgLocks, running both tasks; what it opens goes into {@code open}. */
  private static void startNode(DataSource ds, String node, List<Run> runs, List<AutoCloseable> open) {
    PgLocks locks = PgLocks.builder(ds).namespace(NS).nodeName(node).lease(Duration.ofSeconds(5))
        .connectTimeout(Duration.ofSeconds(10)).build();
    open.add(locks);
    Scheduler s = Scheduler.builder(locks).pollInterval(Duration.ofMillis(200)).sweepInterval(Duration.ofMillis(500))
        .closeTimeout(Duration.ofSeconds(5)).build();
    open.add(s);
    s.register(Task.builder("each", Schedule.fixedRate(Duration.ofSeconds(1))).missedSlots(MissedSlots.RUN_EACH)
        .missedAfter(Duration.ofMinutes(5)).catchUpLimit(100)
        .build(ctx -> runs.add(new Run("each", ctx.slot(), node, ctx.kind(), System.nanoTime()))));
    s.register(Task.builder("plain", Schedule.fixedRate(Duration.ofSeconds(1)))
        .build(ctx -> runs.add(new Run("plain", ctx.slot(), node, ctx.kind(), System.nanoTime()))));
    s.start();
  }

  /**
   * Asynchronous replication cut a few slots before the failover, and the whole fleet restarted
   * with it (the nodes closed before the kill, fresh nodes started after the promotion, so no node
   * remembers a decision): the new primary's newest run row is the one the standby had at the cut,
   * and every slot since has no row. Then the missed-slot policy is the bound: {@code each}
   * (RUN_EACH, missed after 5 min) runs every slot since the cut again, {@code plain} (SKIP, missed
   * after the period) records those older than a second as skipped and runs none of them again.
   */
  @org.junit.jupiter.api.Test
  void asynchronousFailover_fleetRestarted_rerunsAsTheMissedSlotPolicySays() throws Exception {
    try (ReplicatedPair pair = pair(false)) {
      DataSource ds = pair.dataSource("pglock-sched-failover-test");
      List<Run> runs = new CopyOnWriteArrayList<>();
      List<AutoCloseable> open = new ArrayList<>();
      try {
        for (String node : List.of("n1", "n2")) {
          startNode(ds, node, runs, open);
        }
        Await.until("3 runs of each task", BACK, () -> slots(runs, "each").size() >= 3 && slots(runs, "plain").size() >= 3);
        pair.awaitStandbyCaughtUp();
        pair.cutReplication();
        Instant boundary = newestSlot(pair.standby().dataSource("pglock-sched-failover-check"));
        int atCut = runs.size();
        Await.until("3 more runs of each task after the cut", BACK,
            () -> runs.stream().skip(atCut).filter(r -> r.task().equals("each")).count() >= 3
                && runs.stream().skip(atCut).filter(r -> r.task().equals("plain")).count() >= 3);
        for (int i = open.size() - 1; i >= 0; i--) {
          open.get(i).close();
        }
        open.clear();
        int runsBeforeFailover = runs.size();
        ReplicatedPair.Failover failover = pair.failover();
        for (String node : List.of("n3", "n4")) {
          startNode(ds, node, runs, open);
        }
        Await.until("3 on-time runs of each task after the failover", BACK, () -> runs.stream()
            .filter(r -> r.at() > failover.promotedAt() && r.kind() == RunKind.SCHEDULED).count() >= 6);
        for (int i = open.size() - 1; i >= 0; i--) {
          open.get(i).close();
        }
        open.clear();

        StringBuilder summary = new StringBuilder();
        Map<String, Set<Instant>> rerun = new TreeMap<>();
        Map<String, Set<Instant>> afterCut = new TreeMap<>();
        for (String task : List.of("each", "plain")) {
          Set<Instant> old = runs.subList(0, runsBeforeFailover).stream().filter(r -> r.task().equals(task))
              .map(Run::slot).collect(Collectors.toCollection(TreeSet::new));
          Set<Instant> ranOnOldAfterCut = old.stream().filter(slot -> slot.isAfter(boundary))
              .collect(Collectors.toCollection(TreeSet::new));
          Set<Instant> again = runs.subList(runsBeforeFailover, runs.size()).stream()
              .filter(r -> r.task().equals(task) && old.contains(r.slot())).map(Run::slot)
              .collect(Collectors.toCollection(TreeSet::new));
          rerun.put(task, again);
          afterCut.put(task, ranOnOldAfterCut);
          long firstAfter = runs.stream().filter(r -> r.task().equals(task) && r.at() > failover.promotedAt())
              .mapToLong(Run::at).min().orElseThrow();
          summary.append(String.format("%n  %s: slots run on the old primary after the cut %d, run again on the new"
                  + " primary %d %s; first run on the new primary %.0f ms after the promotion", task,
              ranOnOldAfterCut.size(), again.size(), again, ms(firstAfter - failover.promotedAt())));
        }
        System.out.printf("scheduler failover (asynchronous, cut, fleet restarted): newest slot on the standby at the"
            + " cut %s%s%n", boundary, summary);
        for (Run r : runs) {
          System.out.printf("  run %s %s %s %s %+.0f ms from the promotion%n", r.task(), r.slot(), r.node(), r.kind(),
              ms(r.at() - failover.promotedAt()));
        }
        assertThat(afterCut.get("each")).as("each: slots run on the old primary after the cut").isNotEmpty();
        assertThat(rerun.get("each")).as("each (RUN_EACH, missed after 5 min): every slot run on the old primary after"
            + " the cut runs again, and no other").isEqualTo(afterCut.get("each"));
        assertThat(rerun.get("plain")).as("plain (SKIP, missed after 1 s): slots run again, only after the cut")
            .allMatch(slot -> slot.isAfter(boundary));
      } finally {
        for (int i = open.size() - 1; i >= 0; i--) {
          try {
            open.get(i).close();
          } catch (Exception e) {
            System.err.println("close: " + e);
          }
        }
      }
    }
  }

  private static Set<Instant> slots(List<Run> runs, String task) {
    return runs.stream().filter(r -> r.task().equals(task)).map(Run::slot).collect(Collectors.toSet());
  }

  private static Instant newestSlot(DataSource ds) throws Exception {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
        "SELECT max(slot) FROM pglock.task_run WHERE namespace = ?")) {
      ps.setString(1, NS);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getObject(1, java.time.OffsetDateTime.class).toInstant();
      }
    }
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }
}
