package io.pglock.ownership.internal;

import io.pglock.LockHandle;
import io.pglock.LossCause;
import io.pglock.PgLocks;
import io.pglock.PgLocksClosedException;
import io.pglock.PgLocksConfig;
import io.pglock.SessionLock;
import io.pglock.election.Member;
import io.pglock.election.Membership;
import io.pglock.election.internal.DefaultMembership;
import io.pglock.election.internal.MemberLookup;
import io.pglock.internal.LossCauseWait;
import io.pglock.internal.listing.LockListingQuery;
import io.pglock.ownership.OwnedResource;
import io.pglock.ownership.Owner;
import io.pglock.ownership.Ownership;
import io.pglock.ownership.Release;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One member of one ownership group. Two threads: the ownership's thread runs the owner's
 * callbacks, watches the handles (locally, every 100 ms) and decides; an I/O thread runs what needs
 * the network (the lock table query, the grants, joining), so that a slow or silent network never
 * delays a loss callback past the lease. See {@link Ownership} for the rules.
 */
public final class DefaultOwnership implements Ownership {
  private static final Logger log = LoggerFactory.getLogger(DefaultOwnership.class);
  /** How often the thread looks at its handles' leases itself, besides the loss signals: local, no I/O. */
  private static final long WATCH_MILLIS = 100;
  private static final long WATCH_NANOS = TimeUnit.MILLISECONDS.toNanos(WATCH_MILLIS);
  private static final Duration REJOIN_MIN = Duration.ofMillis(500);
  private static final Duration REJOIN_MAX = Duration.ofSeconds(5);
  /**
   * After a nudge, rounds follow at this pace a few times: a member that hands resources on nudges
   * right after its unlocks are queued, which may reach the server a moment after the nudge.
   */
  private static final long FOLLOW_UP_NANOS = 100_000_000L;
  private static final int FOLLOW_UPS = 2;
  /** How long the way out waits for network work in flight and the leave nudge. */
  private static final long SHUTDOWN_IO_MILLIS = 3_000;

  private final PgLocks locks;
  private final PgLocksConfig config;
  private final String group;
  private final String memberId;
  private final Owner owner;
  private final Duration interval;
  private final Duration closeTimeout;
  private final Duration readTimeout;
  private final Map<String, SessionLock> lockOf = new ConcurrentHashMap<>();
  /** Written by the ownership's thread only (and by a close that timed out); read by any. */
  private final Map<String, Held> owned = new ConcurrentSkipListMap<>();
  private final Thread thread;
  private final IoThread io;
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final GroupNudges nudges;

  private final Object monitor = new Object();
  private Set<String> resources; // guarded by monitor
  private boolean closing; // guarded by monitor
  private boolean roundRequested; // guarded by monitor
  private int followUps; // guarded by monitor: quick rounds still due after a nudge
  private volatile Membership membership; // written by the thread (and join)
  private LossCauseWait membershipLoss; // the thread's (and start's): why the membership's lock went
  /** How long the thread may sleep before it looks at the handles again (a cause may be due sooner). */
  private long watchAgainNanos = WATCH_NANOS; // the thread's
  private final Set<String> recorded = ConcurrentHashMap.newKeySet(); // lock names recorded in the name table
  /** What the thread does while it waits for the I/O thread: watch its handles. */
  private final IoThread.Watcher watcher = new IoThread.Watcher() {
    @Override
    public boolean closing() {
      return isClosing();
    }

    @Override
    public long watchAgainNanos() {
      return watchAgainNanos;
    }

    @Override
    public void watch() {
      DefaultOwnership.this.watch();
    }
  };

  /** One owned resource: what the owner was told, the lock's handle and why it went. */
  private static final class Held {
    final OwnedResource resource;
    final LockHandle handle;
    final LossCauseWait loss;

    Held(OwnedResource resource, LossCauseWait loss) {
      this.resource = resource;
      this.handle = loss.handle();
      this.loss = loss;
    }
  }

  public DefaultOwnership(PgLocks locks, String group, String memberId, Collection<String> resources, Owner owner,
      Duration interval, Duration closeTimeout) {
    this.locks = locks;
    this.config = locks.config();
    this.group = group;
    this.memberId = memberId;
    this.owner = owner;
    this.interval = interval;
    this.closeTimeout = closeTimeout;
    if (config.nodeName().indexOf(':') >= 0) {
      throw new IllegalArgumentException("the node name of the PgLocks must not contain ':' to join an ownership group"
          + " (the lock table shows the node name up to its first ':'): \"" + config.nodeName() + "\"");
    }
    this.readTimeout = config.lease().compareTo(LockListingQuery.DEFAULT_READ_TIMEOUT) < 0 ? config.lease() : LockListingQuery.DEFAULT_READ_TIMEOUT;
    this.resources = checked(resources);
    String prefix = "pglock-" + config.nodeName() + "-ownership-" + group;
    this.thread = new Thread(this::run, prefix);
    this.thread.setDaemon(true);
    this.io = new IoThread(prefix + "-io", monitor, readTimeout.multipliedBy(2),
        "ownership " + group + " of member " + memberId);
    this.nudges = new GroupNudges(config.dataSource(), config.namespace(), group, memberId, prefix + "-listen",
        this::nudged);
  }

  /**
   * Records the lock names, joins the membership and checks that no other member shares this
   * node name (here, so that errors reach the caller), then starts the threads.
   */
  public void start() {
    Set<String> names;
    synchronized (monitor) {
      names = resources;
    }
    try {
      recordNames(names);
      joined(DefaultMembership.join(locks, group, memberId));
      checkNodeUnique();
    } catch (RuntimeException | Error e) {
      Membership m = membership;
      if (m != null) {
        m.close();
      }
      io.shutdownNow();
      throw e;
    }
    nudges.start();
    thread.start();
    nudgeOthers(); // the others make room for this member now, not at their next round
  }

  /**
   * A member's resources are counted by the node name of the connections that hold them, so two
   * members with one node name would count each other's and could leave resources unowned.
   */
  private void checkNodeUnique() {
    GroupSnapshot snapshot = GroupSnapshot.read(config.dataSource(), config.schema(), config.namespace(), group,
        readTimeout);
    for (Map.Entry<String, Optional<String>> m : snapshot.members().entrySet()) {
      if (!m.getKey().equals(memberId) && m.getValue().equals(Optional.of(config.nodeName()))) {
        throw new IllegalStateException("the member \"" + m.getKey() + "\" of ownership group \"" + group
            + "\" has the node name \"" + config.nodeName() + "\" too: each member needs a PgLocks of its own with a"
            + " unique node name (PgLocksBuilder.nodeName), as resources are counted by the node that holds them");
      }
    }
  }

  /** Checks the names and creates (so checks the length of) each resource's lock. */
  private Set<String> checked(Collection<String> names) {
    Set<String> set = OwnershipNames.checkResources(names);
    for (String r : set) {
      lockOf.computeIfAbsent(r, n -> locks.lock(Ownership.lockName(group, n)).withFencing());
    }
    return Collections.unmodifiableSet(set);
  }

  @Override
  public String group() {
    return group;
  }

  @Override
  public String memberId() {
    return memberId;
  }

  @Override
  public Set<String> resources() {
    synchronized (monitor) {
      return resources;
    }
  }

  @Override
  public void resources(Collection<String> newResources) {
    Set<String> set = checked(newResources);
    synchronized (monitor) {
      resources = set;
      roundRequested = true;
      monitor.notifyAll();
    }
  }

  @Override
  public List<OwnedResource> owned() {
    List<OwnedResource> list = new ArrayList<>();
    for (Held h : owned.values()) {
      if (h.handle.isHeld()) {
        list.add(h.resource);
      }
    }
    return List.copyOf(list);
  }

  @Override
  public Optional<OwnedResource> ownership(String resource) {
    Held h = owned.get(Objects.requireNonNull(resource, "resource"));
    return h != null && h.handle.isHeld() ? Optional.of(h.resource) : Optional.empty();
  }

  @Override
  public List<Member> members() {
    return MemberLookup.find(config.dataSource(), config.schema(), config.namespace(), group);
  }

  /** Takes a membership as this member's, watched for its loss (which wakes the thread). */
  private void joined(DefaultMembership m) {
    membershipLoss = new LossCauseWait(m.handle(), config.lease(), this::wakeThread);
    membership = m;
  }

  /** Wakes the thread to look at the handles now: a loss signal came. */
  private void wakeThread() {
    synchronized (monitor) {
      monitor.notifyAll();
    }
  }

  /** Nudges the other members from the I/O thread, without waiting; not at all once closed (the way out nudges). */
  private void nudgeOthers() {
    io.execute(nudges::send);
  }

  /** Runs network work on the I/O thread, watching the handles meanwhile; null if given up ({@link IoThread#call}). */
  private <T> T io(Supplier<T> work) {
    return io.call(work, watcher);
  }

  /** Another member changed something: balance now, and twice more shortly after. */
  private void nudged() {
    synchronized (monitor) {
      roundRequested = true;
      followUps = FOLLOW_UPS;
      monitor.notifyAll();
    }
  }

  /** Whether a quick follow-up round is due; counts it. */
  private boolean takeFollowUp() {
    synchronized (monitor) {
      if (followUps == 0) {
        return false;
      }
      followUps--;
      return true;
    }
  }

  @Override
  public void rebalance() {
    synchronized (monitor) {
      roundRequested = true;
      monitor.notifyAll();
    }
  }

  @Override
  public void close() {
    synchronized (monitor) {
      closing = true;
      monitor.notifyAll();
    }
    if (Thread.currentThread() == thread || !thread.isAlive() && stopped.getCount() == 0) {
      return;
    }
    boolean done;
    try {
      done = stopped.await(closeTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      done = false;
    }
    if (!done) {
      // Releasing now would hand resources on before their owner was told: the thread releases
      // each one after its lost callback returns.
      log.warn("ownership {} of member {}: not stopped within {} (an owner callback still runs, or the network is"
          + " slow); its resources are released as soon as their lost callbacks return", group, memberId,
          closeTimeout);
    }
  }

  private boolean isClosing() {
    synchronized (monitor) {
      return closing;
    }
  }

  private void run() {
    long nextRound = System.nanoTime();
    long rejoinAt = 0;
    Duration backoff = REJOIN_MIN;
    try {
      while (!isClosing()) {
        watch();
        long now = System.nanoTime();
        long wakeAt;
        if (membership == null) {
          takeRoundRequest(); // nothing to balance until this member is back in: no busy wait
          if (now - rejoinAt >= 0) {
            if (rejoin()) {
              backoff = REJOIN_MIN;
              nextRound = now;
              continue;
            }
            rejoinAt = System.nanoTime() + jitter(backoff).toNanos();
            backoff = backoff.multipliedBy(2).compareTo(REJOIN_MAX) > 0 ? REJOIN_MAX : backoff.multipliedBy(2);
          }
          wakeAt = rejoinAt;
        } else {
          if (now - nextRound >= 0 || takeRoundRequest()) {
            round();
            nextRound = System.nanoTime() + (takeFollowUp() ? FOLLOW_UP_NANOS : jitter(interval).toNanos());
          }
          wakeAt = nextRound;
        }
        awaitWake(wakeAt);
      }
    } catch (PgLocksClosedException e) {
      log.debug("ownership {} of member {}: the PgLocks was closed", group, memberId);
    } catch (RuntimeException | Error e) {
      log.error("ownership {} of member {}: the ownership's thread failed; this member gives up its resources",
          group, memberId, e);
    } finally {
      shutdown();
      stopped.countDown();
    }
  }

  private boolean takeRoundRequest() {
    synchronized (monitor) {
      boolean requested = roundRequested;
      roundRequested = false;
      return requested;
    }
  }

  /** Waits until the deadline, a wake (close, a round request), or the next watch, whichever is first. */
  private void awaitWake(long deadline) {
    long nanos = Math.min(watchAgainNanos, deadline - System.nanoTime());
    if (nanos <= 0) {
      return;
    }
    synchronized (monitor) {
      if (closing || roundRequested) {
        return;
      }
      try {
        TimeUnit.NANOSECONDS.timedWait(monitor, nanos);
      } catch (InterruptedException e) {
        // not interruptible: a stray interrupt from user code; the conditions decide
      }
    }
  }

  /**
   * Tells the owner about every resource lost, and ends a membership that was lost. No I/O. A
   * resource whose lock is no longer held is not owned from that instant ({@link #owned()} asks the
   * handle); the owner is told as soon as the cause is known ({@link LossCauseWait}).
   */
  private void watch() {
    long now = System.nanoTime();
    long again = WATCH_NANOS;
    for (Held h : owned.values()) {
      LossCause cause = h.loss.poll(now);
      if (cause == null) {
        again = Math.min(again, h.loss.sleepNanos(now, WATCH_NANOS));
        continue;
      }
      release(h, release(cause));
    }
    watchAgainNanos = again;
    Membership m = membership;
    if (m == null) {
      return;
    }
    LossCause cause = membershipLoss.poll(now);
    if (cause == null) {
      watchAgainNanos = Math.min(watchAgainNanos, membershipLoss.sleepNanos(now, WATCH_NANOS));
      return;
    }
    if (cause == LossCause.CLOSED) {
      throw new PgLocksClosedException("the PgLocks of ownership " + group + " was closed");
    }
    log.warn("ownership {}: member {} left the group ({}); giving up its resources and joining again",
        group, memberId, cause);
    for (Held h : List.copyOf(owned.values())) {
      release(h, release(cause));
    }
    m.close();
    membership = null;
    membershipLoss = null;
  }

  private static Release release(LossCause cause) {
    switch (cause) {
      case CONNECTION_LOST:
        return Release.CONNECTION_LOST;
      case LEASE_EXPIRED:
        return Release.LEASE_EXPIRED;
      default:
        return Release.SHUTDOWN;
    }
  }

  /** Joins the membership again; false if not now (logged). */
  private boolean rejoin() {
    DefaultMembership m = io(() -> {
      try {
        return DefaultMembership.join(locks, group, memberId);
      } catch (IllegalStateException e) {
        // our former member lock, not yet freed by the server (a lease that ran out): wait for it
        log.info("ownership {}: member {} cannot join again yet ({}); retrying", group, memberId, e.getMessage());
        return null;
      }
    });
    if (m == null) {
      return false;
    }
    if (isClosing()) {
      m.close();
      return false;
    }
    log.info("ownership {}: member {} joined the group again", group, memberId);
    joined(m);
    nudgeOthers();
    return true;
  }

  /**
   * One balancing round: give up what is no longer wanted, read who holds what, then carry out
   * the {@link RoundPlan}: give up what is too much, or take free resources up to the share.
   */
  private void round() {
    Set<String> wanted = resources();
    for (String r : RoundPlan.removed(wanted, owned.keySet())) {
      Held h = owned.get(r);
      if (h != null) {
        release(h, Release.REMOVED);
      }
    }
    List<String> toRecord = new ArrayList<>();
    for (String r : wanted) {
      if (!recorded.contains(r)) {
        toRecord.add(r);
      }
    }
    GroupSnapshot snapshot = io(() -> {
      recordNames(toRecord);
      return GroupSnapshot.read(config.dataSource(), config.schema(), config.namespace(), group, readTimeout);
    });
    if (snapshot == null || membership == null) {
      return;
    }
    RoundPlan plan = RoundPlan.plan(memberId, resources(), List.copyOf(owned.keySet()), snapshot.heldCounts(),
        snapshot::isHeld);
    if (!plan.giveUp().isEmpty()) {
      for (String r : plan.giveUp()) {
        Held h = owned.get(r);
        if (h != null) {
          release(h, Release.REBALANCED);
        }
      }
      nudgeOthers(); // whoever is short takes them now
      return;
    }
    if (plan.wantMore() == 0) {
      return;
    }
    List<String> free = new ArrayList<>(plan.free());
    Collections.shuffle(free); // members that take at once mostly try different resources
    Membership member = membership;
    List<Map.Entry<String, LockHandle>> got = io(() -> tryAcquire(free, plan.wantMore()));
    if (got == null) {
      return;
    }
    for (Map.Entry<String, LockHandle> e : got) {
      if (membership == member && member.isJoined()) {
        gain(e.getKey(), e.getValue());
      } else {
        e.getValue().close(); // the membership ended meanwhile: not a member, owns nothing
      }
    }
  }

  /** Tries the free resources without waiting until {@code count} are taken; on I/O thread. */
  private List<Map.Entry<String, LockHandle>> tryAcquire(List<String> free, int count) {
    List<Map.Entry<String, LockHandle>> got = new ArrayList<>();
    try {
      for (String r : free) {
        if (got.size() >= count) {
          break;
        }
        lockOf.get(r).tryAcquire().ifPresent(h -> got.add(Map.entry(r, h)));
      }
    } catch (RuntimeException e) {
      if (got.isEmpty()) {
        throw e;
      }
      log.debug("ownership {}: taking resources stopped early: {}", group, e.toString());
    }
    return got;
  }

  private void gain(String resource, LockHandle handle) {
    if (isClosing() || !resources().contains(resource) || !handle.isHeld()) {
      handle.close();
      return;
    }
    OwnedResource r = new OwnedResource(group, resource, memberId, handle.fencingToken(), Instant.now(),
        config.namespace(), Ownership.lockName(group, resource));
    Held h = new Held(r, new LossCauseWait(handle, config.lease(), this::wakeThread)); // the thread tells the owner
    owned.put(resource, h);
    log.debug("ownership {}: member {} gained {} (token {})", group, memberId, resource, r.fencingToken());
    try {
      owner.gained(r);
    } catch (RuntimeException | Error e) {
      log.error("ownership {}: the owner's gained callback threw for {}; ignored", group, resource, e);
    }
  }

  /** Tells the owner, then releases the lock: so that the next owner gains it only after. */
  private void release(Held h, Release why) {
    owned.remove(h.resource.resource(), h);
    log.debug("ownership {}: member {} lost {} ({}), token {}", group, memberId, h.resource.resource(), why,
        h.resource.fencingToken());
    try {
      owner.lost(h.resource, why);
    } catch (RuntimeException | Error e) {
      log.error("ownership {}: the owner's lost callback threw for {}; ignored", group, h.resource.resource(), e);
    } finally {
      h.handle.close();
    }
  }

  private void recordNames(Collection<String> names) {
    if (names.isEmpty()) {
      return;
    }
    List<String> lockNames = new ArrayList<>();
    names.forEach(n -> lockNames.add(Ownership.lockName(group, n)));
    MemberLookup.recordNames(config.dataSource(), config.schema(), config.namespace(), lockNames);
    recorded.addAll(names);
  }

  /** On the thread's way out: tells the owner SHUTDOWN for each resource, releases them, leaves. */
  private void shutdown() {
    for (Held h : List.copyOf(owned.values())) {
      release(h, Release.SHUTDOWN);
    }
    Membership m = membership;
    if (m != null) {
      m.close();
    }
    nudges.stop();
    io.execute(nudges::send); // the others take this member's resources now; after any I/O in flight
    io.shutdown(SHUTDOWN_IO_MILLIS);
    nudges.close();
    log.debug("ownership {}: member {} left", group, memberId);
  }

  private static Duration jitter(Duration d) {
    long n = d.toNanos();
    return Duration.ofNanos(n * 8 / 10 + ThreadLocalRandom.current().nextLong(n * 4 / 10 + 1));
  }

  @Override
  public String toString() {
    return "Ownership[" + group + ", member=" + memberId + ", owns " + owned.size() + " of " + resources().size()
        + (isClosing() ? ", closed" : "") + "]";
  }
}
