package io.pglock.bench;

import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.PgLocks;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * B4: one process holds 10,000 locks at once ({@code maxHeldLocks(20_000)}). Goals: connections
 * used (at most 4) and heap per held lock (at most 1 KiB: used heap after full GCs, before and
 * after acquiring them all, over the count). Informational: time to acquire them all, 16 threads
 * through one {@code PgLocks}, against raw JDBC taking them one by one on one connection (the only
 * way one raw connection can hold them all). Then all are released and the server must show none.
 *
 * <p>10,000 locks take most of a default server's lock table (shared by every database and client):
 * the two sides never hold theirs at the same time, and each round releases before the next.
 */
final class B4ManyHeld implements Benchmark {
  static final int THREADS = 16;
  static final int MAX_CONNECTIONS = 4;
  static final long MAX_HEAP_PER_LOCK = 1024;

  @Override
  public String id() {
    return "B4";
  }

  @Override
  public String title() {
    return "10,000 locks held at once: connections, heap per lock, time to acquire";
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    int n = o.b4Locks();
    int rounds = Math.min(o.rounds(), 3);
    long base = Benchmark.keyBase();
    String pgPattern = db.pglockPattern("b4");
    String rawName = db.runPrefix + "-b4-raw";
    List<Double> heap = new ArrayList<>();
    List<Integer> conns = new ArrayList<>();
    List<Long> releaseMillis = new ArrayList<>();
    long[] leftOnServer = {0};
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try (Connection monitor = db.connect(db.runPrefix + "-monitor");
        Connection raw = db.connect(rawName);
        PreparedStatement rawTry = raw.prepareStatement("SELECT pg_try_advisory_lock(?)");
        PreparedStatement rawUnlockAll = raw.prepareStatement("SELECT pg_advisory_unlock_all()");
        SessionWatcher watcher = new SessionWatcher(db, pgPattern)) {
      long before = Db.countAllLocks(monitor);
      Rounds.Measure rawRound = () -> {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
          if (!B1Uncontended.call(rawTry, base + i)) {
            throw new IllegalStateException("raw try-lock of free key " + (base + i) + " failed");
          }
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        long held = Db.countAdvisoryLocks(monitor, rawName);
        rawUnlockAll.executeQuery().close();
        if (held != n) {
          throw new IllegalStateException("the server shows " + held + " raw locks, expected " + n);
        }
        return ms;
      };
      Rounds.Measure pgRound = () -> {
        LockHandle[] handles = new LockHandle[n];
        try (PgLocks locks = db.pgLocks("b4", b -> b.maxHeldLocks(20_000))) {
          long used0 = usedHeapAfterGc();
          long t0 = System.nanoTime();
          List<Callable<Void>> tasks = new ArrayList<>();
          for (int t = 0; t < THREADS; t++) {
            int first = t;
            tasks.add(() -> {
              for (int i = first; i < n; i += THREADS) {
                handles[i] = locks.lock(LockKey.of(base + i)).tryAcquire().orElseThrow(
                    () -> new IllegalStateException("pglock try-acquire of a free key failed"));
              }
              return null;
            });
          }
          for (Future<Void> f : pool.invokeAll(tasks)) {
            f.get();
          }
          double ms = (System.nanoTime() - t0) / 1e6;
          long used1 = usedHeapAfterGc();
          heap.add((used1 - used0) / (double) n);
          conns.add(Math.max(locks.openSessions(), watcher.sample()));
          long held = Db.countAdvisoryLocks(monitor, pgPattern);
          if (held != n || locks.heldLocks() != n) {
            throw new IllegalStateException("the server shows " + held + " pglock locks and heldLocks() says "
                + locks.heldLocks() + ", expected " + n);
          }
          long r0 = System.nanoTime();
          for (LockHandle h : handles) {
            h.close();
          }
          long left;
          // the server frees a lock when the unlock runs; heldLocks() counts down when its answer has been
          // read, a moment later: wait for both
          while (((left = Db.countAdvisoryLocks(monitor, pgPattern)) > 0 || locks.heldLocks() > 0)
              && System.nanoTime() - r0 < 10_000_000_000L) {
            Thread.sleep(1);
          }
          releaseMillis.add((System.nanoTime() - r0) / 1_000_000);
          leftOnServer[0] = Math.max(leftOnServer[0], left);
          if (locks.heldLocks() != 0) {
            throw new IllegalStateException("heldLocks() is " + locks.heldLocks() + " after closing every handle");
          }
          return ms;
        }
      };
      Rounds.Paired p = Rounds.interleave(rounds, rawRound, pgRound);
      // the first entries are the warm-up round's
      double heapPerLock = median(heap.subList(1, heap.size()));
      int maxConns = conns.stream().mapToInt(Integer::intValue).max().orElse(0);
      Report r = new Report(id(), title());
      r.limit("connections holding " + n, "1", Integer.toString(maxConns), "<= " + MAX_CONNECTIONS,
          maxConns <= MAX_CONNECTIONS);
      r.limit("heap per held lock", "-", Report.fmt("%.0f B", heapPerLock), "<= 1024 B",
          heapPerLock <= MAX_HEAP_PER_LOCK);
      r.info("time to acquire " + n, Report.fmt("%.0f ms (1 conn, serial)", p.baselineMedian()),
          Report.fmt("%.0f ms (%d threads)", p.pglockMedian(), THREADS), Report.fmt("%.2fx", p.ratio()));
      r.limit("server locks after release", "0", Report.fmt("%d (gone in %d ms)", leftOnServer[0],
          releaseMillis.stream().mapToLong(Long::longValue).max().orElse(0)), "0", leftOnServer[0] == 0);
      r.note("%s (ms to acquire %d)", p.detail("%.0f"), n);
      r.note("heap per lock by round (B): %s; connections by round: %s", heap.subList(1, heap.size())
          .stream().map(d -> Report.fmt("%.0f", d)).toList(), conns.subList(1, conns.size()));
      r.note("locks in the server's lock table before B4 (all clients): %d", before);
      return r;
    } finally {
      pool.shutdownNow();
    }
  }

  private static double median(List<Double> values) {
    return Rounds.median(values.stream().mapToDouble(Double::doubleValue).toArray());
  }

  /** Used heap after full collections, once it has settled. */
  static long usedHeapAfterGc() throws InterruptedException {
    MemoryMXBean mx = ManagementFactory.getMemoryMXBean();
    long last = Long.MAX_VALUE;
    for (int i = 0; i < 10; i++) {
      System.gc();
      Thread.sleep(50);
      long used = mx.getHeapMemoryUsage().getUsed();
      if (i >= 2 && Math.abs(used - last) < 16 * 1024) {
        return used;
      }
      last = used;
    }
    return last;
  }
}
