package io.pglock.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.PgLocks;
import io.pglock.micrometer.PgLocksMetrics;
import io.pglock.queue.ClaimMode;
import io.pglock.bench.B10Report.Outcome;
import java.sql.Connection;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * B13: what metrics and tracing cost. B1's cycle (1 thread, a new key every cycle) and B2's (64
 * threads on {@code lockSessions(2)}, a random key of 1M every cycle), each by a plain
 * {@code PgLocks} (the baseline) against one built with {@code listener(new PgLocksMetrics(registry))}
 * and bound to it ({@code metrics.bind(locks)}), on a {@link SimpleMeterRegistry}, in interleaved
 * rounds; then B10's burn-down (pre-inserted no-op jobs, one worker, advisory mode) by a plain queue
 * against one with metrics, tracing and queue gauges ({@link Observability}), the two alternating.
 * Goals: the observed side at most 5% slower (1 thread: time per cycle <= 1.05x; 64 threads and the
 * burn-down: throughput >= 0.95x).
 *
 * <p>As in B12, the two sides run the same code but for the listener, so the figures are medians over
 * <em>all</em> rounds (at least {@value #MIN_ROUNDS} unless the short run, {@code --trials} below 10):
 * the quiet filter, which keeps the rounds whose baseline was fast, would favour the baseline.
 */
final class B13ObservabilityCost implements Benchmark {
  static final double GOAL_1_THREAD = 1.05;
  static final double GOAL_THROUGHPUT = 0.95;
  static final int THREADS = 64;
  static final long KEY_SPACE = 1_000_000;
  static final int MIN_ROUNDS = 20;
  /** Jobs of the unmeasured burn-down each side runs first (the queue's code is not warm yet). */
  static final int WARM_UP_JOBS = 2_000;

  @Override
  public String id() {
    return "B13";
  }

  @Override
  public String title() {
    return "metrics and tracing on vs off: B1's cycle (1 thread), B2's (64 threads), B10's burn-down";
  }

  static boolean shortRun(BenchOptions o) {
    return o.trials() < B10BurnDown.SHORT_BELOW_TRIALS;
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    long ramp = Math.min(500_000_000L, o.roundNanos() / 4);
    int rounds = shortRun(o) ? o.rounds() : Math.max(MIN_ROUNDS, o.rounds());
    Report r = new Report(id(), title());
    oneThread(db, o, r, ramp, rounds);
    manyThreads(db, o, r, ramp, rounds);
    burnDown(db, o, r);
    r.note("listener alone, no database: %s", ListenerCost.measure());
    return r;
  }

  private void oneThread(Db db, BenchOptions o, Report r, long ramp, int rounds) throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    PgLocksMetrics metrics = new PgLocksMetrics(registry);
    try (PgLocks plain = db.pgLocks("b13-1-plain", b -> b);
        PgLocks observed = db.pgLocks("b13-1-observed", b -> b.listener(metrics))) {
      metrics.bind(observed);
      AtomicLong next = new AtomicLong(Benchmark.keyBase());
      Cpu plainCpu = new Cpu();
      Cpu observedCpu = new Cpu();
      Load.Cycle plainCycle = plainCpu.counted(t -> freshKey(plain, next.getAndIncrement()));
      Load.Cycle observedCycle = observedCpu.counted(t -> freshKey(observed, next.getAndIncrement()));
      Rounds.Paired p = Rounds.interleave(rounds,
          () -> plainCpu.measure(() -> Load.run(1, ramp, o.roundNanos(), "b13-plain", plainCycle).microsPerCycle()),
          () -> observedCpu.measure(
              () -> Load.run(1, ramp, o.roundNanos(), "b13-observed", observedCycle).microsPerCycle()));
      r.atMost("cycle time, 1 thread (B1's cycle)", B1Uncontended.fmtUs(p.baselineMedian()) + " plain",
          B1Uncontended.fmtUs(p.pglockMedian()) + " metrics", p.ratio(), GOAL_1_THREAD);
      r.note("1 thread: %s (us per cycle; baseline = plain, pglock = metrics)", p.detail("%.1f"));
      r.note("1 thread: %s", Rounds.summary(p, p.quiet(true), "%.1f us"));
      r.note("1 thread: %s", Cpu.compare(plainCpu, observedCpu, "cycle"));
      r.note("1 thread: %s recorded %,d attempts; gauges %s", PgLocksMetrics.ACQUIRE,
          Observability.count(registry, PgLocksMetrics.ACQUIRE), gauges(registry));
    } finally {
      registry.close();
    }
  }

  private void manyThreads(Db db, BenchOptions o, Report r, long ramp, int rounds) throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    PgLocksMetrics metrics = new PgLocksMetrics(registry);
    try (PgLocks plain = db.pgLocks("b13-64-plain", b -> b.lockSessions(B2ManyThreads.LOCK_SESSIONS));
        PgLocks observed = db.pgLocks("b13-64-observed",
            b -> b.lockSessions(B2ManyThreads.LOCK_SESSIONS).listener(metrics))) {
      metrics.bind(observed);
      long base = Benchmark.keyBase();
      Cpu plainCpu = new Cpu();
      Cpu observedCpu = new Cpu();
      Load.Cycle plainCycle =
          plainCpu.counted(t -> randomKey(plain, base + ThreadLocalRandom.current().nextLong(KEY_SPACE)));
      Load.Cycle observedCycle =
          observedCpu.counted(t -> randomKey(observed, base + ThreadLocalRandom.current().nextLong(KEY_SPACE)));
      Rounds.Paired p = Rounds.interleave(rounds,
          () -> plainCpu.measure(() -> Load.run(THREADS, ramp, o.roundNanos(), "b13-plain", plainCycle).perSecond()),
          () -> observedCpu.measure(
              () -> Load.run(THREADS, ramp, o.roundNanos(), "b13-observed", observedCycle).perSecond()));
      r.atLeast("cycles/s, 64 threads (B2's cycle)", Report.fmt("%,.0f/s plain", p.baselineMedian()),
          Report.fmt("%,.0f/s metrics", p.pglockMedian()), p.ratio(), GOAL_THROUGHPUT);
      r.note("64 threads: %s (cycles/s)", p.detail("%.0f"));
      r.note("64 threads: %s", Rounds.summary(p, p.quiet(false), "%,.0f/s"));
      r.note("64 threads: %s", Cpu.compare(plainCpu, observedCpu, "cycle"));
      r.note("64 threads: %s recorded %,d attempts; gauges %s", PgLocksMetrics.ACQUIRE,
          Observability.count(registry, PgLocksMetrics.ACQUIRE), gauges(registry));
    } finally {
      registry.close();
    }
  }

  private static String gauges(SimpleMeterRegistry registry) {
    return Report.fmt("%s %.0f, %s %.0f", PgLocksMetrics.HELD, registry.get(PgLocksMetrics.HELD).gauge().value(),
        PgLocksMetrics.SESSIONS, registry.get(PgLocksMetrics.SESSIONS).gauge().value());
  }

  /**
   * Plain and observed burn-downs of the same job count, alternating (P O, O P, ...) after an
   * unmeasured warm-up of each; the figure is the median of the pairs' ratios.
   */
  private void burnDown(Db db, BenchOptions o, Report r) throws Exception {
    int jobs = B10BurnDown.jobs(o);
    int workers = o.b10Workers();
    int pairs = Math.max(2, o.rounds() / 5);
    long pid = ProcessHandle.current().pid();
    double[] plain = new double[pairs];
    double[] observed = new double[pairs];
    Cpu plainCpu = new Cpu();
    Cpu observedCpu = new Cpu();
    try (Observability obs = new Observability();
        Connection monitor = db.connect(db.runPrefix + "-monitor-b13")) {
      long spans0 = 0;
      long children0 = 0;
      long attempts0 = 0;
      for (int i = -1; i < pairs; i++) {
        int n = i < 0 ? Math.min(jobs, WARM_UP_JOBS) : jobs;
        boolean[] order = i % 2 != 0 && i >= 0 ? new boolean[] {true, false} : new boolean[] {false, true};
        for (boolean isObserved : order) {
          PglockBurnDown c = isObserved
              ? new PglockBurnDown(db, workers, ClaimMode.ADVISORY, "b13-observed", "b13-" + pid + "-observed",
                  "pglock advisory, metrics and tracing", obs)
              : new PglockBurnDown(db, workers, ClaimMode.ADVISORY, "b13-plain", "b13-" + pid + "-plain",
                  "pglock advisory, plain", QueueInstrumentation.NONE);
          Outcome out = B10BurnDown.runOne(db, c, n, monitor);
          if (out.error() != null) {
            throw new IllegalStateException("B13 burn-down failed, " + out.name() + ": " + out.error());
          }
          if (i < 0) {
            if (isObserved) {
              obs.flush();
              spans0 = obs.exporter.spans.get();
              children0 = obs.exporter.children.get();
              attempts0 = obs.attempts();
            }
            continue;
          }
          (isObserved ? observed : plain)[i] = out.burnDown().jobsPerSecond();
          (isObserved ? observedCpu : plainCpu).add(c.cpuNanos(), n);
          if (i == 0 && !isObserved) {
            r.note("burn-down, plain: %s", c.settings());
          } else if (i == 0) {
            r.note("burn-down, observed: %s", c.settings());
          }
        }
      }
      boolean flushed = obs.flush();
      Rounds.Paired p = new Rounds.Paired(plain, observed);
      r.atLeast(Report.fmt("jobs/s, %,d no-op jobs, 1 worker x %d, advisory (B10's)", jobs, workers),
          Report.fmt("%,.0f/s plain", p.baselineMedian()), Report.fmt("%,.0f/s metrics+tracing", p.pglockMedian()),
          p.ratio(), GOAL_THROUGHPUT);
      r.note("burn-down: %d pairs after a warm-up of %,d jobs each, alternating plain/observed (P O, O P, ...); %s "
          + "(jobs/s); ratio = median of the pairs' ratios", pairs, Math.min(jobs, WARM_UP_JOBS), p.detail("%.0f"));
      r.note("burn-down: %s (the database's CPU not counted)", Cpu.compare(plainCpu, observedCpu, "job"));
      long spans = obs.exporter.spans.get() - spans0;
      long children = obs.exporter.children.get() - children0;
      r.note("burn-down, observed: %,d attempts in %s; %,d spans exported (%,d with a parent; %d enqueue spans "
          + "among them)%s; queue gauges when the last observed burn-down ended (refreshed every 10 s, the first "
          + "at its start): pglock.jobs %s", obs.attempts() - attempts0, "pglock.jobs.attempts", spans, children,
          pairs * ((jobs + PglockBurnDown.BATCH - 1) / PglockBurnDown.BATCH), flushed ? "" : " (flush timed out)",
          obs.lastGauges);
    }
  }

  /**
   * The JVM's CPU time (all threads) over a side's rounds, ramps included, and the cycles run meanwhile
   * (ramps included): CPU per cycle, a figure less blurred by other processes' load than time.
   */
  static final class Cpu {
    private final LongAdder cycles = new LongAdder();
    private long nanos;
    private long counted;

    Load.Cycle counted(Load.Cycle cycle) {
      return t -> {
        cycle.run(t);
        cycles.increment();
      };
    }

    double measure(Rounds.Measure m) throws Exception {
      long c0 = cycles.sum();
      long t0 = ProcessCpu.nanos();
      double v = m.run();
      add(ProcessCpu.nanos() - t0, cycles.sum() - c0);
      return v;
    }

    void add(long cpuNanos, long units) {
      nanos += cpuNanos;
      counted += units;
    }

    double microsPer() {
      return nanos / 1e3 / counted;
    }

    static String compare(Cpu plain, Cpu observed, String unit) {
      return Report.fmt("JVM CPU per %s (all threads): plain %.1f us, observed %.1f us (%+.1f us,"
          + " %+.1f%%)", unit, plain.microsPer(), observed.microsPer(), observed.microsPer() - plain.microsPer(),
          (observed.microsPer() / plain.microsPer() - 1) * 100);
    }
  }

  /** B1's cycle: a key nobody holds, taken then released. */
  private static void freshKey(PgLocks locks, long k) {
    Optional<LockHandle> h = locks.lock(LockKey.of(k)).tryAcquire();
    if (h.isEmpty()) {
      throw new IllegalStateException("try-acquire of free key " + k + " failed");
    }
    h.get().close();
  }

  /** B2's cycle: a try that finds the key taken counts too. */
  private static void randomKey(PgLocks locks, long k) {
    locks.lock(LockKey.of(k)).tryAcquire().ifPresent(LockHandle::close);
  }
}
