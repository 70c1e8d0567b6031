package io.pglock.queue;

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
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 17, the queue: PostgreSQL fails over (a real primary and its streaming standby, the primary
 * killed with {@code pg_ctl stop -m immediate} and the standby promoted) while two in-process
 * workers, each on its own {@link PgLocks} over pgjdbc's multi-host URL, run a few hundred jobs.
 *
 * <p>Each attempt is recorded by its handler, in its own committed transaction, in
 * {@code attempt_log} on the server the handler reaches (with {@code inet_server_port()}, which
 * tells the old primary from the new one), guarded by the fencing check of docs/queue.md (the row
 * must still be the running attempt), and in memory.
 *
 * <p>Synchronous replication: every job whose enqueue returned succeeds on the new primary, none is
 * lost, and a job attempted on both primaries has a higher attempt number on the new one (claims are
 * replicated before they return). Asynchronous replication, cut on purpose partway (the worst case
 * of lag): exactly the jobs enqueued after the cut are lost, exactly the jobs that finished after
 * the cut run again, nothing from before the cut is lost or rerun; a job first claimed after the cut
 * gets the same attempt number again on the new primary (the attempt is not a fencing token across
 * such a failover), and the new primary's id sequence, as replicated before the cut, hands the lost
 * jobs' ids out again to new jobs (so jobs are known here by their payload, not their id).
 */
@org.junit.jupiter.api.Tag("faults") // real servers and processes failing; run on one JDK in CI (.ci/run)
class JobFailoverTest {
  private static final Duration BACK = Duration.ofSeconds(120);
  private static final int BEFORE = 200;
  private static final int AFTER_CUT = 50;
  private static final int AFTER_FAILOVER = 10;
  private static final int CONCURRENCY = 4;
  private static final long WORK_MS = 50;
  private static final String QUEUE = "failover";

  private static final int PHASE_BEFORE_CUT = 0;
  private static final int PHASE_AFTER_CUT = 1;
  private static final int PHASE_FAILING_OVER = 2;
  private static final int PHASE_AFTER_FAILOVER = 3;

  /** An attempt as its handler saw it: the port of the server it recorded it on, the test's phase. */
  record Attempt(String key, long job, int attempt, int port, int phase, long at) {}

  @ParameterizedTest(name = "synchronous replication: {0}")
  @ValueSource(booleans = {true, false})
  void failoverMidRun(boolean synchronous) throws Exception {
    ReplicatedPair pair;
    try {
      pair = ReplicatedPair.start(synchronous, primary -> {
        PgLockSchema.migrate(primary, PgLockSchema.DEFAULT_SCHEMA);
        try (Connection c = primary.getConnection(); Statement s = c.createStatement()) {
          s.execute("CREATE TABLE attempt_log (seq bigserial PRIMARY KEY, job_id bigint NOT NULL, attempt int NOT NULL,"
              + " port int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())");
        }
      }, "max_connections=60");
    } catch (PrivateServer.Unavailable e) {
      assumeTrue(false, "no private PostgreSQL servers here: " + e.getMessage());
      return;
    }
    try (pair) {
      int oldPort = pair.primary().port();
      int newPort = pair.standby().port();
      DataSource ds = pair.dataSource("pglock-job-failover-test");
      AtomicInteger phase = new AtomicInteger(PHASE_BEFORE_CUT);
      AtomicBoolean gateOpen = new AtomicBoolean(true);
      AtomicInteger pastGate = new AtomicInteger();
      AtomicInteger atGate = new AtomicInteger();
      List<Attempt> started = new CopyOnWriteArrayList<>();
      List<Attempt> finished = new CopyOnWriteArrayList<>();
      List<String> refused = new CopyOnWriteArrayList<>();

      @SuppressWarnings("rawtypes")
      JobHandler<Map> handler = (payload, job) -> {
        String key = payload.get("tag") + "#" + payload.get("i");
        // past the gate counts before the gate is looked at: once the test closed it and saw none past it,
        // none is between the look and the count
        while (true) {
          pastGate.incrementAndGet();
          if (gateOpen.get()) {
            break;
          }
          pastGate.decrementAndGet();
          atGate.incrementAndGet();
          try {
            while (!gateOpen.get()) {
              if (job.shouldStop()) {
                throw new IllegalStateException("lost while waiting at the gate");
              }
              LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // waiting for the test to open the gate
            }
          } finally {
            atGate.decrementAndGet();
          }
        }
        try {
          int port = record(ds, job);
          if (port == 0) {
            refused.add(job.id() + "#" + job.attempt());
            throw new IllegalStateException("job " + job.id() + " attempt " + job.attempt() + " is not the running attempt");
          }
          started.add(new Attempt(key, job.id(), job.attempt(), port, phase.get(), System.nanoTime()));
          Thread.sleep(WORK_MS); // the job's work
          finished.add(new Attempt(key, job.id(), job.attempt(), port, phase.get(), System.nanoTime()));
        } finally {
          pastGate.decrementAndGet();
        }
      };

      List<AutoCloseable> open = new ArrayList<>();
      // a job is known by its payload (tag#i): after an asynchronous failover its id may be handed out again
      Map<String, Long> enqueuedBeforeCut = new TreeMap<>();
      Map<String, Long> enqueuedAfterCut = new TreeMap<>();
      Map<String, Long> enqueuedAfterFailover = new TreeMap<>();
      try {
        List<JobQueue> queues = new ArrayList<>();
        for (String node : List.of("w1", "w2")) {
          PgLocks locks = PgLocks.builder(ds).namespace("failover").nodeName(node).lease(Duration.ofSeconds(5))
              .connectTimeout(Duration.ofSeconds(10)).build();
          open.add(locks);
          JobQueue q = JobQueue.builder(locks).build();
          open.add(q);
          queues.add(q);
        }
        enqueuedBeforeCut.putAll(enqueue(queues.get(0), BEFORE, "before"));
        for (JobQueue q : queues) {
          open.add(q.worker(QUEUE).concurrency(CONCURRENCY).backoff(attempt -> Duration.ofMillis(50))
              .pollInterval(Duration.ofMillis(200)).rescueInterval(Duration.ofMillis(100))
              .shutdownTimeout(Duration.ZERO).handler("work", Map.class, handler).start());
        }
        Await.until("a third of the jobs done", BACK, () -> finished.size() >= BEFORE / 3);

        Set<String> doneBeforeCut = Set.of();
        if (!synchronous) {
          // quiesce: handlers wait at the gate, those past it finish and their outcomes are written; then
          // the standby catches up with everything so far and is cut: the cut's boundary is exact
          gateOpen.set(false);
          Await.until("no handler past the gate", BACK, () -> pastGate.get() == 0);
          Set<String> done = finished.stream().map(Attempt::key).collect(Collectors.toSet());
          Await.until("every finished job's outcome written", BACK,
              () -> count(pair.primary().dataSource("pglock-job-failover-check"), "state = 'succeeded'") == done.size());
          doneBeforeCut = done;
          pair.awaitStandbyCaughtUp();
          pair.cutReplication();
          phase.set(PHASE_AFTER_CUT);
          System.out.printf("async cut: %d jobs succeeded before the cut, %d claimed and waiting at the gate%n",
              done.size(), atGate.get());
        }
        enqueuedAfterCut.putAll(enqueue(queues.get(0), AFTER_CUT, "after-cut"));
        gateOpen.set(true);
        int finishedAtCut = finished.size();
        Await.until("60 more jobs done", BACK, () -> finished.size() >= finishedAtCut + 60);

        phase.set(PHASE_FAILING_OVER);
        int finishedBeforeFailover = finished.size();
        ReplicatedPair.Failover failover = pair.failover();
        phase.set(PHASE_AFTER_FAILOVER);

        DataSource newPrimary = pair.standby().dataSource("pglock-job-failover-check");
        Await.until("an attempt on the new primary", BACK, () -> started.stream().anyMatch(a -> a.port() == newPort));
        long firstNewAttempt = started.stream().filter(a -> a.port() == newPort).mapToLong(Attempt::at).min().orElseThrow();
        enqueuedAfterFailover.putAll(enqueue(queues.get(0), AFTER_FAILOVER, "after-failover"));
        Await.until("every job on the new primary succeeded", BACK,
            () -> count(newPrimary, "state <> 'succeeded'") == 0 && count(newPrimary, "true") > 0);
        long allDoneAt = System.nanoTime();
        for (int i = open.size() - 1; i >= 0; i--) {
          open.get(i).close();
        }
        open.clear();

        Map<String, String> states = states(newPrimary);
        Map<Long, List<Integer>> logged = attemptLog(newPrimary);
        Map<String, List<Attempt>> byJob = started.stream().collect(Collectors.groupingBy(Attempt::key));
        Set<String> attemptedOnNew = started.stream().filter(a -> a.port() == newPort).map(Attempt::key)
            .collect(Collectors.toSet());
        // finished on the old primary before the kill: the handler returned there
        Set<String> finishedOnOld = finished.stream().filter(a -> a.port() == oldPort && a.phase() < PHASE_FAILING_OVER)
            .map(Attempt::key).collect(Collectors.toSet());
        Set<String> reruns = new TreeSet<>(finishedOnOld);
        reruns.retainAll(attemptedOnNew);
        Set<String> risingChecked = new HashSet<>();
        Set<String> numberReused = new TreeSet<>();
        for (Map.Entry<String, List<Attempt>> e : byJob.entrySet()) {
          Set<Integer> onOld = e.getValue().stream().filter(a -> a.port() == oldPort).map(Attempt::attempt)
              .collect(Collectors.toSet());
          Set<Integer> onNew = e.getValue().stream().filter(a -> a.port() == newPort).map(Attempt::attempt)
              .collect(Collectors.toSet());
          if (!onOld.isEmpty() && !onNew.isEmpty()) {
            risingChecked.add(e.getKey());
            if (onNew.stream().mapToInt(Integer::intValue).min().orElseThrow()
                <= onOld.stream().mapToInt(Integer::intValue).max().orElseThrow()) {
              numberReused.add(e.getKey());
            }
          }
        }
        Set<String> lost = new TreeSet<>();
        for (Map<String, Long> keys : List.of(enqueuedBeforeCut, enqueuedAfterCut)) {
          for (String key : keys.keySet()) {
            if (!states.containsKey(key)) {
              lost.add(key);
            }
          }
        }
        Set<Long> idsReused = new TreeSet<>(enqueuedAfterFailover.values());
        idsReused.retainAll(enqueuedAfterCut.values());

        System.out.printf("queue failover (%s): %d jobs enqueued (%d before the cut/failover point, %d after the cut,"
                + " %d after the failover), %d finished on the old primary before the kill; first attempt on the new"
                + " primary %.0f ms after the promotion (%.0f ms after the kill), all jobs succeeded %.0f ms after the"
                + " promotion; lost %d, reruns %d (of %d jobs finished on the old primary), jobs attempted on both"
                + " primaries %d, of which with an attempt number not above the old one %d, lost ids handed out again"
                + " after the failover %d, stale attempts refused by the fencing check %d, attempts in all %d%n",
            synchronous ? "synchronous" : "asynchronous, cut",
            enqueuedBeforeCut.size() + enqueuedAfterCut.size() + enqueuedAfterFailover.size(), enqueuedBeforeCut.size(),
            enqueuedAfterCut.size(), enqueuedAfterFailover.size(), finishedBeforeFailover,
            ms(firstNewAttempt - failover.promotedAt()), ms(firstNewAttempt - failover.killedAt()),
            ms(allDoneAt - failover.promotedAt()), lost.size(), reruns.size(), finishedOnOld.size(),
            risingChecked.size(), numberReused.size(), idsReused.size(), refused.size(), started.size());

        if (synchronous) {
          Set<String> all = new TreeSet<>(enqueuedBeforeCut.keySet());
          all.addAll(enqueuedAfterCut.keySet());
          all.addAll(enqueuedAfterFailover.keySet());
          assertThat(lost).as("committed jobs lost in a synchronous failover").isEmpty();
          assertThat(states.keySet()).as("jobs on the new primary").containsExactlyInAnyOrderElementsOf(all);
          assertThat(states.values()).as("states on the new primary").allMatch("succeeded"::equals);
          assertThat(risingChecked).as("jobs attempted on both primaries (failover mid-run)").isNotEmpty();
          assertThat(numberReused).as("jobs whose attempt on the new primary is not above their attempt on the old one")
              .isEmpty();
          logged.forEach((job, attempts) -> assertThat(attempts)
              .as("attempt numbers of job %d in attempt_log, in commit order: each new and rising", job)
              .doesNotHaveDuplicates().isSorted());
        } else {
          assertThat(lost).as("lost: exactly the jobs enqueued after the cut").isEqualTo(enqueuedAfterCut.keySet());
          assertThat(states.keySet()).as("jobs on the new primary: those enqueued before the cut and after the failover")
              .containsAll(enqueuedBeforeCut.keySet()).containsAll(enqueuedAfterFailover.keySet());
          assertThat(states.values()).as("states on the new primary").allMatch("succeeded"::equals);
          Set<String> finishedAfterCut = finished.stream()
              .filter(a -> a.port() == oldPort && a.phase() == PHASE_AFTER_CUT && enqueuedBeforeCut.containsKey(a.key()))
              .map(Attempt::key).collect(Collectors.toCollection(TreeSet::new));
          assertThat(finishedAfterCut).as("jobs finished on the old primary after the cut").isNotEmpty();
          assertThat(attemptedOnNew).as("every job finished on the old primary after the cut runs again on the new one")
              .containsAll(finishedAfterCut);
          Set<String> rerunBeforeCut = new TreeSet<>(doneBeforeCut);
          rerunBeforeCut.retainAll(attemptedOnNew);
          assertThat(rerunBeforeCut).as("jobs finished before the cut that ran again: none").isEmpty();
          Set<String> rerunOutsideWindow = new TreeSet<>(reruns);
          rerunOutsideWindow.removeAll(finishedAfterCut);
          assertThat(rerunOutsideWindow).as("reruns of jobs not finished after the cut").isEmpty();
          assertThat(doneBeforeCut).as("succeeded before the cut, still succeeded on the new primary")
              .allMatch(id -> "succeeded".equals(states.get(id)));
          Set<String> rerunSameNumber = new TreeSet<>(finishedAfterCut);
          rerunSameNumber.retainAll(numberReused);
          System.out.printf("queue failover (asynchronous, cut): %d jobs finished after the cut on the old primary, all"
                  + " %d ran again; %d of them with an attempt number not above the old primary's (claimed first after"
                  + " the cut: the standby's row was still available), %d with a higher one (claimed before the cut);"
                  + " %d of the jobs enqueued after the failover got the id of a lost job%n", finishedAfterCut.size(),
              reruns.size(), rerunSameNumber.size(), finishedAfterCut.size() - rerunSameNumber.size(), idsReused.size());
        }
      } finally {
        gateOpen.set(true);
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

  /** Records the attempt on the server the data source reaches; 0 if it is not the running attempt there. */
  private static int record(DataSource ds, JobContext job) throws Exception {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
        "INSERT INTO attempt_log (job_id, attempt, port) SELECT ?, ?, inet_server_port() WHERE EXISTS"
            + " (SELECT 1 FROM pglock.job WHERE id = ? AND attempt = ? AND state = 'running' FOR SHARE)"
            + " RETURNING port")) {
      ps.setLong(1, job.id());
      ps.setInt(2, job.attempt());
      ps.setLong(3, job.id());
      ps.setInt(4, job.attempt());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getInt(1) : 0;
      }
    }
  }

  /** Enqueues n jobs, each known by its payload's tag#i; returns their ids by that key. */
  private static Map<String, Long> enqueue(JobQueue q, int n, String tag) {
    List<JobRequest> requests = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      requests.add(JobRequest.of("work", Map.of("tag", tag, "i", i)).queue(QUEUE));
    }
    List<Enqueued> done = q.enqueueAll(requests);
    Map<String, Long> ids = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      ids.put(tag + "#" + i, done.get(i).id());
    }
    return ids;
  }

  /** Jobs matching a condition; -1 while the server does not answer. */
  private static long count(DataSource ds, String where) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pglock.job WHERE queue = ? AND " + where)) {
      ps.setString(1, QUEUE);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (java.sql.SQLException e) {
      return -1;
    }
  }

  /** The jobs of the queue by their payload's tag#i, and their states. */
  private static Map<String, String> states(DataSource ds) throws Exception {
    Map<String, String> states = new HashMap<>();
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
        "SELECT (payload->>'tag') || '#' || (payload->>'i'), state FROM pglock.job WHERE queue = ?")) {
      ps.setString(1, QUEUE);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          assertThat(states.put(rs.getString(1), rs.getString(2))).as("job %s twice", rs.getString(1)).isNull();
        }
      }
    }
    return states;
  }

  private static Map<Long, List<Integer>> attemptLog(DataSource ds) throws Exception {
    Map<Long, List<Integer>> log = new HashMap<>();
    try (Connection c = ds.getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT job_id, attempt FROM attempt_log ORDER BY seq")) {
      while (rs.next()) {
        log.computeIfAbsent(rs.getLong(1), k -> new ArrayList<>()).add(rs.getInt(2));
      }
    }
    return log;
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }
}
