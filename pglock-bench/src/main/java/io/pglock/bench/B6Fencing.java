package io.pglock.bench;

import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * B6: the cost of fencing tokens. The same pglock cycle, try-acquire then close, unfenced
 * (baseline: {@code locks.lock(k)}) and fenced (pglock: {@code locks.lock(k).withFencing()}, whose
 * grant runs {@code try_lock_fenced}: the advisory lock plus a {@code nextval} of the token sequence),
 * on one {@code PgLocks} shared by both sides. Each thread cycles through keys of its own,
 * {@link #KEYS_PER_THREAD} of them (the fenced side's differ from the baseline's), so a key's
 * release has long reached the server when the key comes round again. Two loads: 1 thread (mean time
 * per cycle; default settings) and 64 threads ({@code lockSessions(2)} as in B2; cycles per second).
 * The schema is installed ({@link PgLockSchema#migrate}) first.
 */
final class B6Fencing implements Benchmark {
  static final int THREADS = 64;
  static final int LOCK_SESSIONS = 2;
  static final int KEYS_PER_THREAD = 256;
  static final double GOAL_1_THREAD = 1.3;
  static final double GOAL_64_THREADS = 0.7;

  @Override
  public String id() {
    return "B6";
  }

  @Override
  public String title() {
    return "fenced vs unfenced try-acquire + release: 1 thread (time per cycle), 64 threads (cycles/s)";
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    int version = PgLockSchema.migrate(db.simpleDataSource(), PgLockSchema.DEFAULT_SCHEMA);
    long ramp = Math.min(500_000_000L, o.roundNanos() / 4);
    Report r = new Report(id(), title());
    long plainBase = Benchmark.keyBase();
    long fencedBase = plainBase + (long) THREADS * KEYS_PER_THREAD; // disjoint from the baseline's keys
    AtomicLong plainMisses = new AtomicLong();
    AtomicLong fencedMisses = new AtomicLong();
    try {
      try (PgLocks locks = db.pgLocks("b6-1", b -> b)) {
        Rounds.Paired p = Rounds.interleave(o.rounds(),
            () -> Load.run(1, ramp, o.roundNanos(), "b6-plain", cycles(locks, plainBase, false, plainMisses))
                .microsPerCycle(),
            () -> Load.run(1, ramp, o.roundNanos(), "b6-fenced", cycles(locks, fencedBase, true, fencedMisses))
                .microsPerCycle());
        Rounds.Paired q = p.quiet(true);
        r.atMost("cycle time, 1 thread", B1Uncontended.fmtUs(q.baselineMedian()) + " unfenced",
            B1Uncontended.fmtUs(q.pglockMedian()) + " fenced", q.ratio(), GOAL_1_THREAD);
        r.note("1 thread: %s (us per cycle)", p.detail("%.1f"));
        r.note("1 thread: %s", Rounds.summary(p, q, "%.1f us"));
      }
      try (PgLocks locks = db.pgLocks("b6-64", b -> b.lockSessions(LOCK_SESSIONS))) {
        Rounds.Paired p = Rounds.interleave(o.rounds(),
            () -> Load.run(THREADS, ramp, o.roundNanos(), "b6-plain", cycles(locks, plainBase, false, plainMisses))
                .perSecond(),
            () -> Load.run(THREADS, ramp, o.roundNanos(), "b6-fenced", cycles(locks, fencedBase, true, fencedMisses))
                .perSecond());
        Rounds.Paired q = p.quiet(false);
        r.atLeast("cycles/s, 64 threads", Report.fmt("%,.0f/s unfenced", q.baselineMedian()),
            Report.fmt("%,.0f/s fenced", q.pglockMedian()), q.ratio(), GOAL_64_THREADS);
        r.note("64 threads: %s (cycles/s)", p.detail("%.0f"));
        r.note("64 threads: %s", Rounds.summary(p, q, "%,.0f/s"));
      }
    } finally {
      r.note("schema version %d; %d keys per thread; tries that found their key still held (counted as cycles): "
          + "%d unfenced, %d fenced", version, KEYS_PER_THREAD, plainMisses.get(), fencedMisses.get());
    }
    return r;
  }

  /** Each thread's cycle: try-acquire the next of its own keys, close. */
  private static Load.PerThread cycles(PgLocks locks, long base, boolean fenced, AtomicLong misses) {
    return t -> {
      long first = base + (long) t * KEYS_PER_THREAD;
      int[] next = {0};
      return thread -> {
        long k = first + next[0];
        next[0] = (next[0] + 1) % KEYS_PER_THREAD;
        Optional<LockHandle> h = fenced ? locks.lock(LockKey.of(k)).withFencing().tryAcquire()
            : locks.lock(LockKey.of(k)).tryAcquire();
        if (h.isPresent()) {
          if (fenced && h.get().fencingToken() <= 0) {
            throw new IllegalStateException("fenced grant of " + k + " without a token");
          }
          h.get().close();
        } else {
          misses.incrementAndGet();
        }
      };
    };
  }
}
