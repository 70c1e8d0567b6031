package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.election.Candidate;
import io.pglock.election.LeaderElection;
import io.pglock.election.Membership;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import io.pglock.fault.TcpProxy;
import io.pglock.internal.TestAccess;
import io.pglock.ownership.OwnedResource;
import io.pglock.ownership.Owner;
import io.pglock.ownership.Ownership;
import io.pglock.ownership.Release;
import io.pglock.testing.OwnedBackends;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * How late the election, ownership's resources and ownership's membership tell their user of a
 * loss: the backend that holds the lock is terminated ({@code pg_terminate_backend}), and the time
 * to the user's callback is measured from the terminate and from the core's own loss signal (a
 * probe lock on the same lock session, whose {@code onLoss} marks when the core knew). The part
 * after the core's signal is what the watchers add: it used to be a whole watch tick (100 ms) for
 * ownership, whose cause was read from a future created on first call; it must be a hand-off now.
 * The bound asserted (median under 50 ms after the core's signal) has room for a loaded machine;
 * the figures are printed for docs/ownership.md and docs/leader-election.md.
 */
class LossNotificationLatencyTest extends PgLocksTestSupport {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final int SAMPLES = 10;
  /** What the watcher may add to the core's signal, median: a hand-off, far below a 100 ms tick. */
  private static final long MEDIAN_AFTER_SIGNAL_MILLIS = 50;
  private final String suffix = UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  static void schema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  /** Four lock sessions, so that one lock's backend can be terminated without the others. */
  private PgLocks locks(String node) {
    return track(builder().nodeName(node + "-" + suffix).lockSessions(4).build());
  }

  private int holderPid(PgLocks locks, String lockName) throws Exception {
    try (Connection c = db().connect()) {
      List<Integer> pids = holderPids(c, locks.key(lockName));
      assertThat(pids).as("holders of " + lockName).hasSize(1);
      return pids.get(0);
    }
  }

  private static void terminate(int pid) throws Exception {
    try (Connection c = db().connect(); PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
      ps.setInt(1, pid);
      ps.execute();
    }
  }

  /** A lock of the instance on the lock session whose backend is {@code pid}; its loss marks the core's signal. */
  private LockHandle probeOn(PgLocks locks, int pid, AtomicLong lostAt) throws Exception {
    for (int i = 0; i < 400; i++) {
      LockHandle h = locks.lock("probe-" + suffix + "-" + i).tryAcquire().orElseThrow();
      if (holderPid(locks, "probe-" + suffix + "-" + i) == pid) {
        h.onLoss(c -> lostAt.compareAndSet(0, System.nanoTime()));
        return h;
      }
      h.close();
    }
    throw new AssertionError("no probe lock landed on backend " + pid);
  }

  /** One measurement: from the terminate and from the core's signal to the callback, in ms. */
  record Sample(double fromTerminate, double fromSignal) {}

  private static double median(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    s.sort(null);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  private static void report(String what, List<Sample> samples) {
    List<Double> fromTerminate = samples.stream().map(Sample::fromTerminate).toList();
    List<Double> fromSignal = samples.stream().map(Sample::fromSignal).toList();
    System.out.printf("loss latency %s (%d samples): from pg_terminate_backend median %.1f ms, max %.1f ms;"
            + " after the core's signal median %.1f ms, max %.1f ms%n", what, samples.size(), median(fromTerminate),
        fromTerminate.stream().mapToDouble(d -> d).max().orElse(0), median(fromSignal),
        fromSignal.stream().mapToDouble(d -> d).max().orElse(0));
    assertThat(median(fromSignal)).as(what + ": median time from the core's loss signal to the callback, ms")
        .isLessThan(MEDIAN_AFTER_SIGNAL_MILLIS);
    assertThat(fromTerminate).as(what + ": every callback came").allMatch(d -> d < WAIT.toMillis());
  }

  private Sample sample(long terminatedAt, AtomicLong signalAt, long callbackAt) {
    await("the core's loss signal", WAIT, () -> signalAt.get() != 0);
    return new Sample((callbackAt - terminatedAt) / 1e6, (callbackAt - signalAt.get()) / 1e6);
  }

  /** An owner that marks the time of each loss. */
  private static final class TimedOwner implements Owner {
    final Map<String, Long> lostAt = new ConcurrentHashMap<>();
    final Map<String, Release> why = new ConcurrentHashMap<>();

    @Override
    public void gained(OwnedResource r) {
      lostAt.remove(r.resource());
      why.remove(r.resource());
    }

    @Override
    public void lost(OwnedResource r, Release reason) {
      why.put(r.resource(), reason);
      lostAt.put(r.resource(), System.nanoTime());
    }
  }

  private static List<String> resources(int n) {
    return IntStream.range(0, n).mapToObj(i -> "r" + i).toList();
  }

  /** A resource of the member held on another backend than {@code pid}. */
  private String resourceNotOn(PgLocks locks, Ownership o, int pid) throws Exception {
    for (OwnedResource r : o.owned()) {
      if (holderPid(locks, r.lockName()) != pid) {
        return r.resource();
      }
    }
    return null;
  }

  @Test
  void ownership_tellsTheOwner_ofAResourceLost_withinAHandOff_ofTheCoresSignal() throws Exception {
    PgLocks locks = locks("own");
    String group = "lat-" + suffix;
    TimedOwner owner = new TimedOwner();
    List<String> res = resources(8);
    Ownership o = track(Ownership.builder(locks, group).join(res, owner));
    List<Sample> samples = new ArrayList<>();
    for (int i = 0; i < SAMPLES; i++) {
      await("all 8 resources owned", WAIT, () -> o.owned().size() == 8);
      int memberPid = holderPid(locks, Membership.lockName(group, o.memberId()));
      String victim = resourceNotOn(locks, o, memberPid);
      assertThat(victim).as("a resource on a backend other than the membership's").isNotNull();
      int pid = holderPid(locks, Ownership.lockName(group, victim));
      AtomicLong signalAt = new AtomicLong();
      LockHandle probe = probeOn(locks, pid, signalAt);
      long t0 = System.nanoTime();
      terminate(pid);
      await("the owner told of " + victim, WAIT, () -> owner.lostAt.containsKey(victim));
      assertThat(owner.why.get(victim)).isEqualTo(Release.CONNECTION_LOST);
      samples.add(sample(t0, signalAt, owner.lostAt.get(victim)));
      probe.close();
    }
    report("ownership, resource", samples);
  }

  @Test
  void ownership_tellsTheOwner_ofAMembershipLost_withinAHandOff_ofTheCoresSignal() throws Exception {
    PgLocks locks = locks("mem");
    String group = "latm-" + suffix;
    TimedOwner owner = new TimedOwner();
    List<String> res = resources(8);
    Ownership o = track(Ownership.builder(locks, group).join(res, owner));
    List<Sample> samples = new ArrayList<>();
    for (int i = 0; i < SAMPLES; i++) {
      AtomicReference<String> victim = new AtomicReference<>();
      AtomicReference<Integer> memberPid = new AtomicReference<>();
      // the member joined again (a back-off) and holds all 8, at least one off the membership's backend
      await("all 8 owned, one apart from the membership", WAIT, () -> {
        try {
          if (o.owned().size() != 8) {
            return false;
          }
          memberPid.set(holderPid(locks, Membership.lockName(group, o.memberId())));
          victim.set(resourceNotOn(locks, o, memberPid.get()));
          return victim.get() != null;
        } catch (Exception | AssertionError e) {
          return false; // between a loss and the rejoin
        }
      });
      AtomicLong signalAt = new AtomicLong();
      LockHandle probe = probeOn(locks, memberPid.get(), signalAt);
      long t0 = System.nanoTime();
      terminate(memberPid.get());
      String r = victim.get();
      await("the owner told of " + r, WAIT, () -> owner.lostAt.containsKey(r));
      // its own lock was not touched: it is given up because the membership went
      assertThat(owner.why.get(r)).isEqualTo(Release.CONNECTION_LOST);
      samples.add(sample(t0, signalAt, owner.lostAt.get(r)));
      probe.close();
    }
    report("ownership, membership", samples);
  }

  @Test
  void election_revokes_withinAHandOff_ofTheCoresSignal() throws Exception {
    PgLocks locks = locks("lead");
    String name = "lat-" + suffix;
    AtomicLong revokedAt = new AtomicLong();
    AtomicReference<Revocation> why = new AtomicReference<>();
    LeaderElection e = track(LeaderElection.join(locks, name, new Candidate() {
      @Override
      public void elected(Term term) {}

      @Override
      public void revoked(Term term, Revocation reason) {
        why.set(reason);
        revokedAt.set(System.nanoTime());
      }
    }));
    List<Sample> samples = new ArrayList<>();
    for (int i = 0; i < SAMPLES; i++) {
      await("elected", WAIT, e::isLeader);
      revokedAt.set(0);
      int pid = holderPid(locks, LeaderElection.lockName(name));
      AtomicLong signalAt = new AtomicLong();
      LockHandle probe = probeOn(locks, pid, signalAt);
      long t0 = System.nanoTime();
      terminate(pid);
      await("revoked", WAIT, () -> revokedAt.get() != 0);
      assertThat(why.get()).isEqualTo(Revocation.CONNECTION_LOST);
      samples.add(sample(t0, signalAt, revokedAt.get()));
      probe.close();
    }
    report("election", samples);
  }

  /**
   * The lease rule's promise at a 1 s lease: a member cut off silently (a frozen proxy: the lock
   * session can renew nothing) is told {@code LEASE_EXPIRED} for each resource within a twentieth
   * of the lease (50 ms) of its lock session's lease deadline, median: the bound docs/ownership.md
   * states. (The code before LossCauseWait passed this one too here, median 30.6 ms: when the
   * watch tick sees the deadline pass before the core's watchdog signals, the old wait happened to
   * be short. The regression tests of that fix are the two pg_terminate_backend ones above.)
   */
  @Test
  void ownership_tellsTheOwner_ofALeaseThatRanOut_within50ms_ofTheDeadline_atA1sLease() throws Exception {
    TcpProxy proxy = proxyToDb();
    PGSimpleDataSource ds = through(proxy, "pglock-test-proxied");
    PgLocks locks = track(PgLocks.builder(OwnedBackends.recording(ds)).namespace("test").nodeName("exp-" + suffix)
        .lease(Duration.ofSeconds(1)).connectTimeout(Duration.ofSeconds(30)).build());
    String group = "late-" + suffix;
    TimedOwner owner = new TimedOwner();
    Ownership o = track(Ownership.join(locks, group, resources(2), owner));
    List<Double> afterDeadline = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      await("both resources owned", WAIT, () -> o.owned().size() == 2);
      LockHandle probe = locks.lock("probe-" + suffix + "-" + i).tryAcquire().orElseThrow(); // the one session
      LongSupplier deadline = TestAccess.leaseDeadline(probe);
      proxy.freeze(); // silent: the session renews nothing from now on
      await("the owner told of both", WAIT, () -> owner.lostAt.size() == 2);
      for (String r : List.of("r0", "r1")) {
        assertThat(owner.why.get(r)).isEqualTo(Release.LEASE_EXPIRED);
        afterDeadline.add((owner.lostAt.get(r) - deadline.getAsLong()) / 1e6); // the deadline it ended with
      }
      proxy.thaw();
      probe.close();
    }
    double median = median(afterDeadline);
    System.out.printf("loss latency ownership, lease 1 s ran out (%d samples): after the lease deadline median"
        + " %.1f ms, max %.1f ms%n", afterDeadline.size(), median,
        afterDeadline.stream().mapToDouble(d -> d).max().orElse(0));
    assertThat(median).as("median time from the lease deadline to the owner's lost, ms").isLessThan(50);
  }
}
