package io.pglock;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Work distribution: many workers (threads or processes) walk the same list of resources, and each
 * resource is worked by at most one of them at a time. A worker try-locks each resource's name and
 * runs the work for the ones it gets, skipping those another worker holds.
 *
 * <pre>{@code
 * WorkReport<Account> report = WorkDistributor.of(locks)
 *     .run(accounts, a -> "account:" + a.id(), a -> reconcile(a));
 * }</pre>
 *
 * <p>Each walk starts at a random position and wraps around, so that workers started together
 * spread over the list instead of queueing on its head: adding a worker spreads the load with no
 * configuration. The lock is held only while the work for its resource runs.
 *
 * <p><b>Guarantee</b>: no two workers run the work for one resource at the same time, among live,
 * connected holders. <b>Not guaranteed</b>: that every resource is processed by one walk (a skipped
 * resource was busy; walk again to pick it up), or exclusion against a paused former holder that
 * lost its lock (check {@link LockHandle#isHeld()} before committing long work, or fence).
 *
 * <p>Thread-safe; one instance may serve many threads.
 */
public final class WorkDistributor {
  private final PgLocks locks;

  private WorkDistributor(PgLocks locks) {
    this.locks = Objects.requireNonNull(locks, "locks");
  }

  /** A distributor over the locks' namespace. */
  public static WorkDistributor of(PgLocks locks) {
    return new WorkDistributor(locks);
  }

  /**
   * Walks the resources once, from a random start, running the work for each one whose lock this
   * worker gets. An exception from the work is recorded in the report and the walk goes on; an
   * interrupt stops the walk after the current resource (the interrupt stays set).
   *
   * @param lockName the lock name of a resource, in the {@link PgLocks} namespace
   * @return what was processed, skipped (locked by another worker) and failed
   */
  public <T> WorkReport<T> run(Collection<? extends T> resources, Function<? super T, String> lockName,
      Consumer<? super T> work) {
    Objects.requireNonNull(work, "work");
    return run(resources, lockName, (resource, handle) -> work.accept(resource));
  }

  /**
   * As {@link #run(Collection, Function, Consumer)}, giving the work the handle too, so that long
   * work can check {@link LockHandle#isHeld()} before it commits, or register
   * {@link LockHandle#onLoss} to stop early.
   */
  public <T> WorkReport<T> run(Collection<? extends T> resources, Function<? super T, String> lockName,
      BiConsumer<? super T, ? super LockHandle> work) {
    Objects.requireNonNull(resources, "resources");
    Objects.requireNonNull(lockName, "lockName");
    Objects.requireNonNull(work, "work");
    List<T> list = new ArrayList<>(resources);
    List<T> processed = new ArrayList<>();
    List<T> skipped = new ArrayList<>();
    Map<T, RuntimeException> failed = new LinkedHashMap<>();
    int n = list.size();
    int start = n == 0 ? 0 : ThreadLocalRandom.current().nextInt(n);
    for (int i = 0; i < n && !Thread.currentThread().isInterrupted(); i++) {
      T resource = list.get((start + i) % n);
      Optional<LockHandle> handle = locks.lock(lockName.apply(resource)).tryAcquire();
      if (handle.isEmpty()) {
        skipped.add(resource);
        continue;
      }
      try (LockHandle h = handle.get()) {
        work.accept(resource, h);
        processed.add(resource);
      } catch (RuntimeException e) {
        failed.put(resource, e);
      }
    }
    return new WorkReport<>(processed, skipped, failed);
  }

  /** What one walk did. Immutable. */
  public static final class WorkReport<T> {
    private final List<T> processed;
    private final List<T> skipped;
    private final Map<T, RuntimeException> failed;

    WorkReport(List<T> processed, List<T> skipped, Map<T, RuntimeException> failed) {
      this.processed = List.copyOf(processed);
      this.skipped = List.copyOf(skipped);
      this.failed = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(failed));
    }

    /** Resources whose work ran to completion, in walk order. */
    public List<T> processed() {
      return processed;
    }

    /** Resources another worker held, in walk order. */
    public List<T> skipped() {
      return skipped;
    }

    /** Resources whose work threw, with the exception, in walk order. */
    public Map<T, RuntimeException> failed() {
      return failed;
    }

    @Override
    public String toString() {
      return "WorkReport[processed=" + processed.size() + ", skipped=" + skipped.size() + ", failed="
          + failed.size() + "]";
    }
  }
}
