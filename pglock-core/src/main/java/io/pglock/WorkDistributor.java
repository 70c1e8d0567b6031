package io.pglock;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Work distribution: many workers (threads or processes) walk the same list of resources, and each
 * resource is worked by at most one of them at a time. A worker try-locks each resource's name and
 * runs the work for the ones it gets, skipping those another worker holds; it never waits.
 *
 * <p><b>Guaranteed</b>: no two workers run the work for one resource at the same time, among live,
 * connected holders (the lock is held while the work runs and released as soon as it returns).
 *
 * <p><b>Not guaranteed</b>:
 * <ul>
 *   <li><b>That a resource is processed once.</b> The lock only excludes <i>concurrent</i> work: the
 *       moment a worker finishes a resource and releases it, another worker can take the same
 *       resource and process it again. Quick work over a short list makes this the common case
 *       (three workers over 20 quick resources can each process all 20, one after another). For
 *       work that must be done once, use {@link #runOnce(Collection, Function, Predicate, Consumer)}
 *       with a completion record the work writes and the check reads under the lock.
 *   <li>That one walk processes every resource: a skipped resource was busy; walk again.
 *   <li>Exclusion against a paused former holder that lost its lock (check
 *       {@link LockHandle#isHeld()} before committing long work, or make the completion record a
 *       primary key so that a second completion fails).
 * </ul>
 *
 * <pre>{@code
 * // Each invoice is sent once: the work inserts into invoice_sent (primary key: invoice id) in the
 * // same transaction as its effect; the check reads it after the lock is taken.
 * WorkReport<Invoice> report = WorkDistributor.of(locks).runOnce(invoices, i -> "invoice:" + i.id(),
 *     i -> isSent(i.id()),
 *     i -> sendAndRecordInOneTransaction(i));
 * }</pre>
 *
 * <p><b>Start points.</b> Each walk starts at a different point of the list and wraps around, so
 * that workers started together spread over the list instead of queueing behind each other: within
 * one JVM, successive walks start at points spread evenly (a golden-ratio sequence from a random
 * base, so that three walks over 20 resources start at least four resources apart); walks in
 * different processes start at independent random points. A worker that reaches a resource another
 * holds skips it without waiting, so walks that meet do not convoy either.
 *
 * <p>Thread-safe; one instance may serve many threads.
 */
public final class WorkDistributor {
  /** The fractional part of the golden ratio: the most evenly spreading step around a circle. */
  private static final double GOLDEN_STEP = 0.6180339887498949;
  private static final double BASE = ThreadLocalRandom.current().nextDouble();
  private static final AtomicLong WALKS = new AtomicLong();

  private final PgLocks locks;

  private WorkDistributor(PgLocks locks) {
    this.locks = Objects.requireNonNull(locks, "locks");
  }

  /**
   * A distributor over the locks' namespace.
   *
   * @param locks the locks whose namespace the lock names are in
   * @return a distributor; it keeps no state of its own but the locks
   * @throws UnsupportedOperationException if the locks were built with
   *     {@link PgLocksBuilder#transactionLocksOnly()}: work distribution holds session locks
   */
  public static WorkDistributor of(PgLocks locks) {
    if (locks.config().transactionLocksOnly()) {
      throw new UnsupportedOperationException("WorkDistributor holds session locks, and this PgLocks was built "
          + "with transactionLocksOnly(); build one without it on a DataSource that reaches PostgreSQL directly "
          + "or through a session-mode pool");
    }
    return new WorkDistributor(locks);
  }

  /**
   * Walks the resources once, from this walk's start point, running the work for each one whose
   * lock this worker gets. An exception from the work is recorded in the report and the walk goes
   * on; an interrupt stops the walk after the current resource (the interrupt stays set). A
   * resource may be processed again by another worker right after this one releases it: see
   * {@link #runOnce(Collection, Function, Predicate, Consumer)} for work that must be done once.
   *
   * @param <T> the type of the resources
   * @param resources the resources, walked in this order from the walk's start point
   * @param lockName the lock name of a resource, in the {@link PgLocks} namespace
   * @param work the work for one resource, run under its lock
   * @return what was processed, skipped (locked by another worker) and failed
   * @throws LockSessionException if the database cannot be reached (the walk stops; no lock is held)
   */
  public <T> WorkReport<T> run(Collection<? extends T> resources, Function<? super T, String> lockName,
      Consumer<? super T> work) {
    Objects.requireNonNull(work, "work");
    return walk(resources, lockName, null, (resource, handle) -> work.accept(resource));
  }

  /**
   * As {@link #run(Collection, Function, Consumer)}, giving the work the handle too, so that long
   * work can check {@link LockHandle#isHeld()} before it commits, or register
   * {@link LockHandle#onLoss} to stop early.
   *
   * @param <T> the type of the resources
   * @param resources the resources, walked in this order from the walk's start point
   * @param lockName the lock name of a resource, in the {@link PgLocks} namespace
   * @param work the work for one resource and its handle, run under its lock
   * @return what was processed, skipped (locked by another worker) and failed
   */
  public <T> WorkReport<T> run(Collection<? extends T> resources, Function<? super T, String> lockName,
      BiConsumer<? super T, ? super LockHandle> work) {
    return walk(resources, lockName, null, work);
  }

  /**
   * Walks the resources once like {@link #run(Collection, Function, Consumer)}, for work that must be
   * done once: after taking a resource's lock, and before running the work, it asks
   * {@code isDone}; a resource already done is released at once and reported in
   * {@link WorkReport#alreadyDone()}, not worked again.
   *
   * <p>This holds only if the work records its completion durably <b>before it returns</b> (for
   * example, inserts the resource into a {@code done} table in the same transaction as its effect,
   * and commits), and {@code isDone} reads that record from the database each time (a fresh
   * statement, not a cache). Then, among live holders, each resource is processed at most once, and
   * walking until every resource is done processes each exactly once. Give the completion record a
   * primary key: a paused worker that lost its lock then fails to complete a second time instead of
   * duplicating the effect. If {@code isDone} throws, the resource is reported as failed.
   *
   * @param <T> the type of the resources
   * @param resources the resources, walked in this order from the walk's start point
   * @param lockName the lock name of a resource, in the {@link PgLocks} namespace
   * @param isDone whether the resource's completion record exists; called under its lock
   * @param work the work for one resource, which records its completion before it returns
   * @return what was processed, already done, skipped (locked by another worker) and failed
   */
  public <T> WorkReport<T> runOnce(Collection<? extends T> resources, Function<? super T, String> lockName,
      Predicate<? super T> isDone, Consumer<? super T> work) {
    Objects.requireNonNull(isDone, "isDone");
    Objects.requireNonNull(work, "work");
    return walk(resources, lockName, isDone, (resource, handle) -> work.accept(resource));
  }

  /**
   * As {@link #runOnce(Collection, Function, Predicate, Consumer)}, giving the work the handle too.
   *
   * @param <T> the type of the resources
   * @param resources the resources, walked in this order from the walk's start point
   * @param lockName the lock name of a resource, in the {@link PgLocks} namespace
   * @param isDone whether the resource's completion record exists; called under its lock
   * @param work the work for one resource and its handle, which records its completion before it
   *     returns
   * @return what was processed, already done, skipped (locked by another worker) and failed
   */
  public <T> WorkReport<T> runOnce(Collection<? extends T> resources, Function<? super T, String> lockName,
      Predicate<? super T> isDone, BiConsumer<? super T, ? super LockHandle> work) {
    Objects.requireNonNull(isDone, "isDone");
    return walk(resources, lockName, isDone, work);
  }

  private <T> WorkReport<T> walk(Collection<? extends T> resources, Function<? super T, String> lockName,
      Predicate<? super T> isDone, BiConsumer<? super T, ? super LockHandle> work) {
    Objects.requireNonNull(resources, "resources");
    Objects.requireNonNull(lockName, "lockName");
    Objects.requireNonNull(work, "work");
    List<T> list = new ArrayList<>(resources);
    WorkReport.Builder<T> report = new WorkReport.Builder<>();
    int n = list.size();
    int start = startPoint(WALKS.getAndIncrement(), BASE, n);
    for (int i = 0; i < n && !Thread.currentThread().isInterrupted(); i++) {
      T resource = list.get((start + i) % n);
      Optional<LockHandle> handle = locks.lock(lockName.apply(resource)).tryAcquire();
      if (handle.isEmpty()) {
        report.skipped.add(resource);
        continue;
      }
      try (LockHandle h = handle.get()) {
        if (isDone != null && isDone.test(resource)) {
          report.alreadyDone.add(resource);
          continue;
        }
        work.accept(resource, h);
        report.processed.add(resource);
      } catch (RuntimeException e) {
        report.failed.put(resource, e);
      }
    }
    return report.build();
  }

  /** Where walk number {@code walk} starts in a list of {@code n}: {@code n * frac(base + walk * φ')}. */
  static int startPoint(long walk, double base, int n) {
    if (n == 0) {
      return 0;
    }
    double x = base + (walk % 1_000_003L) * GOLDEN_STEP; // the modulo keeps the double exact enough
    x -= Math.floor(x);
    return Math.min(n - 1, (int) (x * n));
  }

  /**
   * What one walk did. Immutable.
   *
   * @param <T> the type of the resources
   */
  public static final class WorkReport<T> {
    private final List<T> processed;
    private final List<T> alreadyDone;
    private final List<T> skipped;
    private final Map<T, RuntimeException> failed;

    private WorkReport(Builder<T> b) {
      this.processed = List.copyOf(b.processed);
      this.alreadyDone = List.copyOf(b.alreadyDone);
      this.skipped = List.copyOf(b.skipped);
      this.failed = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(b.failed));
    }

    /**
     * Resources whose work ran to completion, in walk order.
     *
     * @return an immutable list
     */
    public List<T> processed() {
      return processed;
    }

    /**
     * Resources this walk locked but found done already (only from {@code runOnce}; empty from
     * {@code run}), in walk order.
     *
     * @return an immutable list
     */
    public List<T> alreadyDone() {
      return alreadyDone;
    }

    /**
     * Resources another worker held, in walk order.
     *
     * @return an immutable list
     */
    public List<T> skipped() {
      return skipped;
    }

    /**
     * Resources whose work (or done check) threw, with the exception, in walk order.
     *
     * @return an immutable map
     */
    public Map<T, RuntimeException> failed() {
      return failed;
    }

    @Override
    public String toString() {
      return "WorkReport[processed=" + processed.size() + ", alreadyDone=" + alreadyDone.size() + ", skipped="
          + skipped.size() + ", failed=" + failed.size() + "]";
    }

    /** Collects one walk's outcome. */
    private static final class Builder<T> {
      final List<T> processed = new ArrayList<>();
      final List<T> alreadyDone = new ArrayList<>();
      final List<T> skipped = new ArrayList<>();
      final Map<T, RuntimeException> failed = new LinkedHashMap<>();

      WorkReport<T> build() {
        return new WorkReport<>(this);
      }
    }
  }
}
