package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class WorkDistributorTest extends PgLocksTestSupport {
  private static final List<Integer> RESOURCES = IntStream.rangeClosed(1, 10).boxed().collect(Collectors.toList());

  @Test
  void run_skipsHeldResources_recordsFailures_andHoldsTheLockDuringWork() {
    PgLocks worker = newLocks();
    PgLocks other = newLocks();
    LockHandle busy = other.lock("r-3").tryAcquire().orElseThrow();
    List<Boolean> heldDuringWork = new ArrayList<>();
    WorkDistributor.WorkReport<Integer> report = WorkDistributor.of(worker).run(RESOURCES, r -> "r-" + r,
        (r, handle) -> {
          heldDuringWork.add(handle.isHeld() && other.lock("r-" + r).tryAcquire().isEmpty());
          if (r == 5) {
            throw new IllegalStateException("boom");
          }
        });
    busy.close();
    assertThat(report.skipped()).containsExactly(3);
    assertThat(report.failed()).containsOnlyKeys(5);
    assertThat(report.processed()).containsExactlyInAnyOrderElementsOf(
        RESOURCES.stream().filter(r -> r != 3 && r != 5).collect(Collectors.toList()));
    assertThat(heldDuringWork).hasSize(9).containsOnly(true);
  }

  @Test
  void run_interrupted_stopsTheWalk() {
    PgLocks worker = newLocks();
    List<Integer> seen = new ArrayList<>();
    try {
      WorkDistributor.WorkReport<Integer> report = WorkDistributor.of(worker).run(RESOURCES, r -> "i-" + r, r -> {
        seen.add(r);
        Thread.currentThread().interrupt();
      });
      assertThat(report.processed()).hasSize(1);
      assertThat(seen).hasSize(1);
    } finally {
      assertThat(Thread.interrupted()).isTrue();
    }
  }

  private static final int WORKERS = 3;
  private static final int MANY = 20;
  private final String doneTable = "done_" + UUID.randomUUID().toString().substring(0, 8);

  @AfterEach
  void dropDoneTable() throws SQLException {
    try (Connection c = db().connect(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + doneTable);
    }
  }

  /** The non-guarantee, shown: the lock excludes concurrent work only, so quick work is redone. */
  @Test
  void run_withoutACompletionCheck_processesAResourceAgainRightAfterAnotherWorkerReleasedIt() {
    PgLocks first = newLocks();
    PgLocks second = newLocks();
    Map<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();
    WorkDistributor.of(first).run(RESOURCES, r -> "again-" + r, r -> runs.computeIfAbsent(r, k -> new AtomicInteger())
        .incrementAndGet());
    // close() releases asynchronously (the server frees the lock in the session's next round trip, usually
    // within a millisecond): "right after" is once the server has it back
    try (Connection c = db().connect()) {
      await("the first walk's releases reach the server", Duration.ofSeconds(30),
          () -> RESOURCES.stream().allMatch(r -> holders(c, first.key("again-" + r)) == 0));
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    WorkDistributor.WorkReport<Integer> report = WorkDistributor.of(second).run(RESOURCES, r -> "again-" + r,
        r -> runs.computeIfAbsent(r, k -> new AtomicInteger()).incrementAndGet());
    assertThat(report.processed()).hasSize(RESOURCES.size());
    assertThat(runs.values()).extracting(AtomicInteger::get).containsOnly(2);
  }

  /**
   * The once-only pattern: three workers (each its own PgLocks, as separate processes would be)
   * over 20 resources; the work inserts the resource into a done table (primary key) and commits,
   * the check reads it under the lock. Each worker's first work waits (bounded) until every worker
   * is inside a work, so that the assertion "each worker processed some" does not depend on thread
   * start timing.
   */
  @Test
  void runOnce_threeWorkersOverTwentyResources_processEachExactlyOnce_andEachWorkerProcessesSome()
      throws Exception {
    try (Connection c = db().connect(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE " + doneTable + " (resource int PRIMARY KEY, worker int NOT NULL)");
    }
    List<Integer> resources = IntStream.range(0, MANY).boxed().collect(Collectors.toList());
    Map<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();
    CountDownLatch allWorking = new CountDownLatch(WORKERS);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<int[]>> workers = new ArrayList<>();
    for (int w = 0; w < WORKERS; w++) {
      int worker = w;
      PgLocks locks = newLocks();
      Connection c = connect();
      workers.add(inBackground(() -> {
        go.await();
        int processed = 0;
        int alreadyDone = 0;
        boolean first = true;
        for (int walk = 0; walk < 50 && doneCount(c) < MANY; walk++) {
          boolean[] waited = {!first};
          WorkDistributor.WorkReport<Integer> report = WorkDistributor.of(locks).runOnce(resources, r -> "once-" + r,
              r -> isDone(c, r),
              r -> {
                runs.computeIfAbsent(r, k -> new AtomicInteger()).incrementAndGet();
                if (!waited[0]) {
                  waited[0] = true;
                  allWorking.countDown();
                  awaitQuietly(allWorking);
                }
                markDone(c, r, worker);
              });
          first = false;
          assertThat(report.failed()).isEmpty();
          processed += report.processed().size();
          alreadyDone += report.alreadyDone().size();
        }
        return new int[] {processed, alreadyDone};
      }));
    }
    go.countDown();
    int total = 0;
    List<Integer> perWorker = new ArrayList<>();
    for (Future<int[]> f : workers) {
      int[] r = f.get(120, TimeUnit.SECONDS);
      perWorker.add(r[0]);
      total += r[0];
    }
    System.out.println("runOnce: " + WORKERS + " workers over " + MANY + " resources processed " + perWorker
        + " (information)");
    assertThat(runs).hasSize(MANY);
    assertThat(runs.values()).extracting(AtomicInteger::get).as("work runs per resource").containsOnly(1);
    assertThat(total).isEqualTo(MANY);
    assertThat(perWorker).as("each worker processed some").allMatch(n -> n > 0);
    try (Connection c = connect()) {
      assertThat(doneCount(c)).isEqualTo(MANY);
    }
  }

  @Test
  void walks_startAtDifferentPoints_atLeastFourApartForThreeWalksOverTwenty() {
    PgLocks locks = newLocks();
    List<Integer> resources = IntStream.range(0, MANY).boxed().collect(Collectors.toList());
    List<Integer> starts = new ArrayList<>();
    for (int walk = 0; walk < WORKERS; walk++) {
      List<Integer> visited = new ArrayList<>();
      WorkDistributor.of(locks).run(resources, r -> {
        visited.add(r);
        return "start-" + r;
      }, r -> { });
      starts.add(visited.get(0));
      assertThat(visited).containsExactlyInAnyOrderElementsOf(resources);
    }
    assertThat(minCircularDistance(starts, MANY)).as("starts %s", starts).isGreaterThanOrEqualTo(4);
    // the same over many bases and walk numbers, without the database
    java.util.Random random = new java.util.Random(42);
    for (int trial = 0; trial < 10_000; trial++) {
      double base = random.nextDouble();
      long walk = random.nextInt(Integer.MAX_VALUE);
      List<Integer> three = List.of(WorkDistributor.startPoint(walk, base, MANY),
          WorkDistributor.startPoint(walk + 1, base, MANY), WorkDistributor.startPoint(walk + 2, base, MANY));
      assertThat(minCircularDistance(three, MANY)).as("base %s walk %s: %s", base, walk, three)
          .isGreaterThanOrEqualTo(4);
    }
    assertThat(WorkDistributor.startPoint(7, 0.5, 0)).isZero();
    assertThat(WorkDistributor.startPoint(7, 0.5, 1)).isZero();
  }

  private static int minCircularDistance(List<Integer> points, int n) {
    int min = n;
    for (int i = 0; i < points.size(); i++) {
      for (int j = i + 1; j < points.size(); j++) {
        int d = Math.abs(points.get(i) - points.get(j));
        min = Math.min(min, Math.min(d, n - d));
      }
    }
    return min;
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private boolean isDone(Connection c, int resource) {
    try (PreparedStatement ps = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM " + doneTable + " WHERE resource = ?)")) {
      ps.setInt(1, resource);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The work's effect and its completion record, in one transaction. */
  private void markDone(Connection c, int resource, int worker) {
    try {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + doneTable + " (resource, worker) VALUES (?, ?)")) {
        ps.setInt(1, resource);
        ps.setInt(2, worker);
        ps.executeUpdate();
      }
      c.commit();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    } finally {
      try {
        c.setAutoCommit(true);
      } catch (SQLException e) {
        // the next statement reports it
      }
    }
  }

  private int doneCount(Connection c) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM " + doneTable)) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
