package io.pglock.internal.recording;

import io.pglock.LockKey;
import io.pglock.PgLocksConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records the names of named keys that are held or awaited for a while, so that {@code <schema>.locks}
 * and every view built on it show names, not numbers, where an operator looks.
 *
 * <p>Why lazily: a name is of use to an operator only while its lock shows in {@code pg_locks}, and
 * most locks of a workload that locks per entity are held for milliseconds. Writing a row per grant
 * cost such a workload 36-48% of its throughput and grew the table without bound. So the lock path
 * does nothing for a session lock's grant, and the recorder's thread looks once a second at what is
 * held ({@code LockTable.heldNames}): a named lock held at two sweeps in a row (so for at least a
 * second, and certainly if for two) has its name written, in one statement per {@value #MAX_BATCH}
 * names. Holding a reference to every granted handle until the sweep, as a first version did, kept
 * tens of thousands of handles a second alive into the next garbage collection: measurably not free.
 *
 * <p>What the lock table cannot tell, a ring of {@value #RING} slots holds until the next sweep: a
 * {@link Wait} (while a blocking acquire waits; one small allocation per blocking acquire) and a
 * transaction lock's key (its end is not visible here: the server records it only if the key is
 * locked at that moment, {@code record_locked_names}). Past {@value #RING} notes between two sweeps
 * the oldest are overwritten, and their names may then not be recorded.
 *
 * <p>Bounded: each process remembers the {@value #MAX_REMEMBERED} names it recorded last and sends
 * none of them again within an hour; the server refreshes a known name's {@code last_seen} at most
 * once an hour; and every {@link #PRUNE_PERIOD} (plus up to a tenth more, at random; the first a
 * period or two after start) the recorder asks the server to delete names not seen for
 * {@link #RETENTION} and the oldest past {@value #MAX_ROWS} rows, never one of a lock held or
 * awaited then ({@code prune_lock_names}, one node at a time).
 *
 * <p>Failures: a write that fails on the data (a name the server cannot store) is split in halves
 * until the offending name is alone, which is dropped with a warning, so that it cannot keep the
 * innocent names of its batch out; any other failure (the database is down) keeps the notes, and
 * the next sweep records the names of the locks still held then. A slow or absent database delays
 * names, never locks.
 *
 * <p>Public (with what the engine calls) only for the engine in {@code io.pglock.internal}; not API.
 */
public final class NameRecorder {
  private static final Logger log = LoggerFactory.getLogger(NameRecorder.class);
  /** Notes kept between two sweeps (a power of two); past this many the oldest are overwritten. */
  static final int RING = 1 << 16;
  /** Slots behind the last sweep's end read again: a grant that took its slot but stored late. */
  private static final int SLACK = 256;
  /** The most names one statement records. */
  static final int MAX_BATCH = 1_000;
  /** The most transaction-lock names a sweep asks the server to check. */
  static final int MAX_UNCHECKED = 1_000;
  /** Names this process recorded last, not sent again within {@link #RESEND}. */
  static final int MAX_REMEMBERED = 10_000;
  private static final long RESEND = TimeUnit.HOURS.toNanos(1);
  /** How often each process asks the server to prune (plus a random part of it). */
  static final Duration PRUNE_PERIOD = Duration.ofMinutes(1);
  /** Names not seen for this long go at the next prune, unless their lock is held or awaited then. */
  static final Duration RETENTION = Duration.ofHours(24);
  /** The most rows the table keeps beyond the names of locks held or awaited at a prune. */
  static final int MAX_ROWS = 100_000;
  /** Rows one prune statement deletes at most; a prune runs at most {@link #PRUNE_STATEMENTS}. */
  static final int PRUNE_BATCH = 5_000;
  private static final int PRUNE_STATEMENTS = 20;

  /** A blocking acquire of a named key, noted while it waits. Public only for the engine; not API. */
  public static final class Wait {
    final LockKey key;
    volatile boolean waiting = true;

    Wait(LockKey key) {
      this.key = key;
    }

    /** The acquire ended, one way or another. */
    public void end() {
      waiting = false;
    }
  }

  private final PgLocksConfig config;
  /** Gives the keys of the named session locks held now. */
  private final Consumer<Consumer<LockKey>> heldNames;
  private final NameWriter writer;
  private final AtomicReferenceArray<Object> ring = new AtomicReferenceArray<>(RING);
  private final AtomicLong noted = new AtomicLong();
  private final BackgroundBatches<Object> thread;
  // The rest belongs to the sweeping thread.
  private long swept;
  /** Notes alive at the last sweep: recorded at this one if still alive. */
  private List<Object> young = new ArrayList<>();
  /** Named session locks held at the last sweep: recorded at this one if still held. */
  private Set<LockKey> heldBefore = new HashSet<>();
  private final Map<LockKey, Long> remembered = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<LockKey, Long> eldest) {
      return size() > MAX_REMEMBERED;
    }
  };
  private long nextPrune;

  private NameRecorder(PgLocksConfig config, Consumer<Consumer<LockKey>> heldNames) {
    this.config = config;
    this.heldNames = heldNames;
    // The thread of BackgroundBatches, its connection handling and its logging; its queue stays empty.
    this.thread = new BackgroundBatches<>(config, log, "lock names in " + config.schema() + ".lock_name", "names",
        1, 1, 0, (c, batch) -> { }, null, this::sweepQuietly, 1);
    this.writer = new NameWriter(config.schema(), thread, log);
    // Not at start: a fleet that restarts together does not prune together.
    this.nextPrune = System.nanoTime() + PRUNE_PERIOD.toNanos()
        + ThreadLocalRandom.current().nextLong(PRUNE_PERIOD.toNanos());
  }

  /**
   * Starts a recorder; call {@link #beginClose()} and {@link #awaitClosed} when the instance closes.
   *
   * @param heldNames gives the keys of the named session locks held now (under the lock table's
   *     monitors: the consumer it is given is quick)
   */
  public static NameRecorder start(PgLocksConfig config, Consumer<Consumer<LockKey>> heldNames) {
    NameRecorder r = new NameRecorder(config, heldNames);
    r.thread.start();
    return r;
  }

  /** Notes a granted transaction lock: its name is recorded if its key is locked a second or two later. */
  public void heldInTransaction(LockKey key) {
    if (key.space() == LockKey.KeySpace.NAME) {
      note(key);
    }
  }

  /**
   * Notes a blocking acquire that begins; call {@link Wait#end()} when it returns.
   *
   * @return the note, or null for a key without a name
   */
  public Wait waiting(LockKey key) {
    if (key.space() != LockKey.KeySpace.NAME) {
      return null;
    }
    Wait w = new Wait(key);
    note(w);
    return w;
  }

  private void note(Object what) {
    ring.lazySet((int) (noted.getAndIncrement() & (RING - 1)), what);
  }

  private void sweepQuietly() {
    try {
      sweep();
    } catch (RuntimeException e) {
      thread.failed("record lock names", e);
    }
  }

  /**
   * One sweep, on the recorder's thread: what is held (or noted and alive) at this sweep and the last
   * has its name written.
   */
  void sweep() {
    List<Object> fresh = drainRing();
    long now = System.nanoTime();
    Set<LockKey> heldSession = new HashSet<>();
    Map<LockKey, Object> due = new LinkedHashMap<>();
    Set<LockKey> heldNow = new HashSet<>();
    heldNames.accept(heldNow::add);
    for (LockKey key : heldNow) {
      if (heldBefore.contains(key)) {
        due.put(key, key);
        heldSession.add(key);
      }
    }
    for (Object o : young) {
      if (alive(o)) {
        due.putIfAbsent(keyOf(o), o);
      }
    }
    List<Object> next = new ArrayList<>();
    Set<LockKey> waiting = new HashSet<>();
    for (Object o : fresh) {
      LockKey key = keyOf(o);
      if (alive(o) && !recentlyRecorded(key, now) && !due.containsKey(key) && waiting.add(key)) {
        next.add(o);
      }
    }
    List<LockKey> known = new ArrayList<>();
    List<LockKey> unchecked = new ArrayList<>();
    for (Map.Entry<LockKey, Object> e : due.entrySet()) {
      if (recentlyRecorded(e.getKey(), now)) {
        continue;
      }
      if (e.getValue() instanceof LockKey && !heldSession.contains(e.getKey())) {
        if (unchecked.size() < MAX_UNCHECKED) {
          unchecked.add(e.getKey());
        }
      } else {
        known.add(e.getKey());
      }
    }
    boolean ok = writer.record(known, false) && writer.record(unchecked, true);
    if (ok) {
      for (LockKey k : known) {
        remembered.put(k, now);
      }
      for (LockKey k : unchecked) {
        remembered.put(k, now);
      }
    } else {
      // The database did not answer: what is still alive gets its name at the next sweep (a session
      // lock still held is due again by the lock table; the notes go back into the pipeline).
      for (Object o : due.values()) {
        if (!heldSession.contains(keyOf(o)) && next.size() < RING && waiting.add(keyOf(o))) {
          next.add(o);
        }
      }
    }
    young = next;
    heldBefore = heldNow;
    if (now - nextPrune >= 0) {
      nextPrune = now + PRUNE_PERIOD.toNanos() + ThreadLocalRandom.current().nextLong(PRUNE_PERIOD.toNanos() / 10);
      writer.prune(RETENTION, MAX_ROWS, PRUNE_BATCH, PRUNE_STATEMENTS);
    }
  }

  /** Takes the notes made since the last sweep (at most {@link #RING}) out of the ring. */
  private List<Object> drainRing() {
    long end = noted.get();
    long from = Math.max(Math.max(0, swept - SLACK), end - RING);
    List<Object> out = new ArrayList<>();
    for (long i = from; i < end; i++) {
      Object o = ring.getAndSet((int) (i & (RING - 1)), null);
      if (o != null) {
        out.add(o);
      }
    }
    swept = end;
    return out;
  }

  private boolean recentlyRecorded(LockKey key, long now) {
    Long at = remembered.get(key);
    return at != null && now - at < RESEND;
  }

  private static boolean alive(Object o) {
    if (o instanceof Wait w) {
      return w.waiting;
    }
    return true; // a transaction lock's key: the server checks
  }

  private static LockKey keyOf(Object o) {
    if (o instanceof Wait w) {
      return w.key;
    }
    return (LockKey) o;
  }

  /** Stops sweeping; {@link #awaitClosed} waits for the thread. */
  public void beginClose() {
    thread.beginClose();
  }

  /**
   * Waits for the thread until the deadline ({@link System#nanoTime()} scale), so that
   * {@code PgLocks.close()} returns with no connection of a pool still on loan.
   *
   * @return true if it finished in time
   */
  public boolean awaitClosed(long deadlineNanos) {
    return thread.awaitClosed(deadlineNanos);
  }

  @Override
  public String toString() {
    return "NameRecorder[" + config.schema() + ", notes " + noted.get() + "]";
  }
}
