package io.pglock.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.pglock.LockMode;
import io.pglock.LossCause;
import io.pglock.PgLocks;
import io.pglock.PgLocksListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Micrometer meters for a {@link PgLocks}: a {@link PgLocksListener} that records acquire attempts,
 * lost locks and leadership, plus gauges read from the instance itself. No Spring needed:
 *
 * <pre>{@code
 * PgLocksMetrics metrics = new PgLocksMetrics(registry);
 * PgLocks locks = PgLocks.builder(dataSource).namespace("billing").listener(metrics).build();
 * metrics.bind(locks); // the gauges pglock.locks.held and pglock.locks.sessions
 * }</pre>
 *
 * <p>Meters (see {@code docs/metrics.md}):
 * <ul>
 *   <li>{@value #ACQUIRE} (timer; tags {@code namespace}, {@code mode} EXCLUSIVE|SHARED,
 *       {@code wait} try|wait, {@code outcome} ACQUIRED|NOT_ACQUIRED|FAILED): every session-lock
 *       acquire attempt and how long it took;
 *   <li>{@value #HELD} (gauge; {@code namespace}): server locks held now ({@link PgLocks#heldLocks()});
 *   <li>{@value #SESSIONS} (gauge; {@code namespace}): lock and wait sessions open now
 *       ({@link PgLocks#openSessions()});
 *   <li>{@value #LOST} (counter; {@code namespace}, {@code cause} CONNECTION_LOST|LEASE_EXPIRED|CLOSED):
 *       held locks lost before their handle was closed, one per handle;
 *   <li>{@value #LEADER} (gauge; {@code namespace}, {@code election}): 1 while this node leads the
 *       election, 0 after; it appears when this node first wins the election.
 * </ul>
 * Tags are low-cardinality only: never a lock's name.
 *
 * <p>One instance may serve several {@link PgLocks} (of different namespaces) on one registry.
 * Thread-safe; the listener methods are allocation-free once a meter exists.
 */
public final class PgLocksMetrics implements PgLocksListener {
  /** The timer of acquire attempts. */
  public static final String ACQUIRE = "pglock.locks.acquire";
  /** The gauge of server locks held. */
  public static final String HELD = "pglock.locks.held";
  /** The gauge of open lock and wait sessions. */
  public static final String SESSIONS = "pglock.locks.sessions";
  /** The counter of lost locks. */
  public static final String LOST = "pglock.locks.lost";
  /** The gauge of leadership, per election. */
  public static final String LEADER = "pglock.election.leader";

  private static final LockMode[] MODES = LockMode.values();
  private static final AcquireKind[] KINDS = AcquireKind.values();
  private static final AcquireOutcome[] OUTCOMES = AcquireOutcome.values();
  private static final LossCause[] CAUSES = LossCause.values();

  private final MeterRegistry registry;
  private final Tags tags;
  /** Per namespace: the acquire timers by (mode, kind, outcome), created on first use. */
  private final ConcurrentMap<String, AtomicReferenceArray<Timer>> acquire = new ConcurrentHashMap<>();
  /** Per namespace: the loss counters by cause, created on first use. */
  private final ConcurrentMap<String, AtomicReferenceArray<Counter>> lost = new ConcurrentHashMap<>();
  /** Per "namespace election": the leader gauge's value (this map keeps it from being collected). */
  private final ConcurrentMap<List<String>, AtomicInteger> leaders = new ConcurrentHashMap<>();

  /**
   * Meters on a registry.
   *
   * @param registry where the meters go
   */
  public PgLocksMetrics(MeterRegistry registry) {
    this(registry, Tags.empty());
  }

  /**
   * Meters on a registry, with tags of the caller's on every meter (such as the database's name,
   * when one application uses several).
   *
   * @param registry where the meters go
   * @param tags added to every meter; low-cardinality values only
   */
  public PgLocksMetrics(MeterRegistry registry, Iterable<Tag> tags) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
  }

  /**
   * Registers the gauges {@value #HELD} and {@value #SESSIONS} of an instance, tagged with its
   * namespace. The gauges hold the instance weakly (a collected instance reads as NaN); after
   * {@link PgLocks#close()} they read 0. If another instance with the same namespace was bound to
   * the registry first, its gauges stay and this one's are not registered (Micrometer keeps the
   * first meter of an id): use the tags of {@link #PgLocksMetrics(MeterRegistry, Iterable)} to tell
   * such instances apart.
   *
   * @param locks the instance; build it with {@code .listener(this)} for the other meters
   * @return the meters registered, for {@link MeterRegistry#remove(Meter)} if the instance goes
   *     away before the registry
   */
  public List<Meter> bind(PgLocks locks) {
    Objects.requireNonNull(locks, "locks");
    Tags t = tags.and("namespace", locks.config().namespace());
    List<Meter> meters = new ArrayList<>(2);
    meters.add(Gauge.builder(HELD, locks, PgLocksMetrics::held).tags(t)
        .description("server advisory locks held by this PgLocks now").baseUnit("locks").register(registry));
    meters.add(Gauge.builder(SESSIONS, locks, PgLocksMetrics::sessions).tags(t)
        .description("lock and wait sessions (connections) this PgLocks has open now").baseUnit("sessions")
        .register(registry));
    return meters;
  }

  private static double held(PgLocks locks) {
    try {
      return locks.heldLocks();
    } catch (RuntimeException e) {
      return 0; // closed
    }
  }

  private static double sessions(PgLocks locks) {
    try {
      return locks.openSessions();
    } catch (RuntimeException e) {
      return 0; // closed
    }
  }

  /**
   * Records the attempt in {@value #ACQUIRE}.
   *
   * @param namespace the namespace of the {@link PgLocks}
   * @param mode the lock's mode
   * @param kind whether the attempt could wait (tag {@code wait}: try or wait)
   * @param outcome how it ended
   * @param nanos how long it took
   */
  @Override
  public void acquireEnded(String namespace, LockMode mode, AcquireKind kind, AcquireOutcome outcome, long nanos) {
    AtomicReferenceArray<Timer> timers = acquire.get(namespace);
    if (timers == null) {
      timers = acquire.computeIfAbsent(namespace, ns -> new AtomicReferenceArray<>(
          MODES.length * KINDS.length * OUTCOMES.length));
    }
    int i = (mode.ordinal() * KINDS.length + kind.ordinal()) * OUTCOMES.length + outcome.ordinal();
    Timer timer = timers.get(i);
    if (timer == null) {
      timer = Timer.builder(ACQUIRE).tags(tags).tag("namespace", namespace).tag("mode", mode.name())
          .tag("wait", kind == AcquireKind.TRY ? "try" : "wait").tag("outcome", outcome.name())
          .description("session-lock acquire attempts and how long they took").register(registry);
      timers.set(i, timer); // a race registers the same meter twice: Micrometer returns the same one
    }
    timer.record(nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Counts the loss in {@value #LOST}.
   *
   * @param namespace the namespace of the {@link PgLocks}
   * @param cause why the lock was lost
   */
  @Override
  public void lockLost(String namespace, LossCause cause) {
    AtomicReferenceArray<Counter> counters = lost.computeIfAbsent(namespace,
        ns -> new AtomicReferenceArray<>(CAUSES.length));
    Counter counter = counters.get(cause.ordinal());
    if (counter == null) {
      counter = Counter.builder(LOST).tags(tags).tag("namespace", namespace).tag("cause", cause.name())
          .description("held locks lost before their handle was closed").baseUnit("locks").register(registry);
      counters.set(cause.ordinal(), counter);
    }
    counter.increment();
  }

  /**
   * Sets the gauge {@value #LEADER} of the election to 1 or 0, registering it on first use.
   *
   * @param namespace the namespace of the {@link PgLocks} the election runs on
   * @param election the election's name
   * @param leader whether this node now leads
   */
  @Override
  public void leadershipChanged(String namespace, String election, boolean leader) {
    AtomicInteger value = leaders.computeIfAbsent(List.of(namespace, election), k -> {
      AtomicInteger v = new AtomicInteger();
      Gauge.builder(LEADER, v, AtomicInteger::get).tags(tags).tag("namespace", namespace).tag("election", election)
          .description("1 while this node leads the election, else 0").register(registry);
      return v;
    });
    value.set(leader ? 1 : 0);
  }

  @Override
  public String toString() {
    return "PgLocksMetrics[" + registry.getClass().getSimpleName() + (tags.stream().findAny().isPresent()
        ? " " + tags : "") + "]";
  }
}
