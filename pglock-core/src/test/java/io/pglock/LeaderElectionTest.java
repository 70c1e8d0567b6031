package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.election.Candidate;
import io.pglock.election.Leader;
import io.pglock.election.LeaderElection;
import io.pglock.election.LeaderElectionBuilder;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Leader election among in-JVM nodes, each with a {@code PgLocks} of its own (so, as far as the
 * server can tell, separate processes). Every callback is recorded with {@link System#nanoTime()}
 * in one list, in the order the callbacks ran.
 */
class LeaderElectionTest extends PgLocksTestSupport {
  private static final Duration WAIT = Duration.ofSeconds(20);

  /** One callback as it ran. */
  record Event(long nanos, String node, boolean elected, long token, Revocation reason, String thread) {
    @Override
    public String toString() {
      return node + (elected ? " ELECTED " : " REVOKED " + reason + " ") + token;
    }
  }

  private final List<Event> events = new ArrayList<>(); // guarded by itself
  private final String election = "daemon-" + UUID.randomUUID().toString().substring(0, 8);
  private final AtomicInteger overlaps = new AtomicInteger();

  @BeforeAll
  static void schema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  /** A node: its own PgLocks, its election, the callbacks recorded. */
  final class Node implements Candidate {
    final String name;
    final PgLocks locks;
    final AtomicInteger inside = new AtomicInteger();
    final AtomicReference<LeaderElection> election = new AtomicReference<>();
    volatile UnaryOperator<Term> onElected = t -> t;

    Node(String name) {
      this.name = name;
      this.locks = track(builder().nodeName(name + "-" + UUID.randomUUID().toString().substring(0, 6)).build());
    }

    Node join(UnaryOperator<LeaderElectionBuilder> settings) {
      election.set(track(settings.apply(LeaderElection.builder(locks, LeaderElectionTest.this.election)).join(this)));
      return this;
    }

    LeaderElection election() {
      return election.get();
    }

    @Override
    public void elected(Term term) {
      record(new Event(System.nanoTime(), name, true, term.fencingToken(), null, Thread.currentThread().getName()));
      onElected.apply(term);
    }

    @Override
    public void revoked(Term term, Revocation reason) {
      record(new Event(System.nanoTime(), name, false, term.fencingToken(), reason, Thread.currentThread().getName()));
    }

    private void record(Event e) {
      if (inside.getAndIncrement() != 0) {
        overlaps.incrementAndGet();
      }
      synchronized (events) {
        events.add(e);
      }
      inside.decrementAndGet();
    }
  }

  private Node node(String name) {
    return new Node(name).join(b -> b);
  }

  private List<Event> events() {
    synchronized (events) {
      return new ArrayList<>(events);
    }
  }

  private List<Event> elected() {
    return events().stream().filter(Event::elected).toList();
  }

  private Event awaitElected(int n) {
    await(n + " elections", WAIT, () -> elected().size() >= n);
    return elected().get(n - 1);
  }

  private Event awaitRevoked(String node, Revocation reason) {
    await(node + " revoked with " + reason, WAIT,
        () -> events().stream().anyMatch(e -> !e.elected() && e.node().equals(node) && e.reason() == reason));
    return events().stream().filter(e -> !e.elected() && e.node().equals(node) && e.reason() == reason)
        .findFirst().orElseThrow();
  }

  private Node byName(List<Node> nodes, String name) {
    return nodes.stream().filter(n -> n.name.equals(name)).findFirst().orElseThrow();
  }

  private LockKey key(Node any) {
    return any.locks.key(LeaderElection.lockName(election));
  }

  /**
   * Per node, callbacks alternate elected/revoked for the same term, never overlap, run on the
   * election's thread; elected tokens strictly increase over the whole election.
   */
  private void assertSerialOrderedAndIncreasing() {
    assertThat(overlaps.get()).as("overlapping callbacks").isZero();
    List<Event> all = events();
    for (String node : all.stream().map(Event::node).distinct().toList()) {
      List<Event> mine = all.stream().filter(e -> e.node().equals(node)).toList();
      for (int i = 0; i < mine.size(); i++) {
        Event e = mine.get(i);
        assertThat(e.elected()).as("event %d of %s: %s", i, node, mine).isEqualTo(i % 2 == 0);
        if (!e.elected()) {
          assertThat(e.token()).as("revoked term of %s", node).isEqualTo(mine.get(i - 1).token());
        }
        assertThat(e.thread()).as("thread of %s", e).contains("-election-" + election);
      }
    }
    List<Event> elected = all.stream().filter(Event::elected).toList();
    for (int i = 1; i < elected.size(); i++) {
      assertThat(elected.get(i).token()).as("terms %s", elected).isGreaterThan(elected.get(i - 1).token());
    }
  }

  @Test
  void join_threeNodes_exactlyOneElected() throws Exception {
    List<Node> nodes = List.of(node("a"), node("b"), node("c"));
    Event first = awaitElected(1);
    LockKey key = key(nodes.get(0));
    await("two standbys waiting on the server", WAIT, () -> serverWaiters(key) == 2);

    assertThat(elected()).as("elections once both standbys wait").hasSize(1);
    assertThat(nodes.stream().filter(n -> n.election().isLeader()).map(n -> n.name).toList())
        .containsExactly(first.node());
    Node leader = byName(nodes, first.node());
    Term term = leader.election().currentTerm().orElseThrow();
    assertThat(term.fencingToken()).isEqualTo(first.token());
    assertThat(term.election()).isEqualTo(election);
    assertThat(term.node()).isEqualTo(leader.locks.config().nodeName());
    assertThat(term.lockName()).isEqualTo("election:" + election);
    assertThat(nodes.stream().filter(n -> n != leader).map(n -> n.election().currentTerm())).allMatch(Optional::isEmpty);
    assertThat(serverHolders(connect(), key)).isEqualTo(1);

    Optional<Leader> seen = LeaderElection.currentLeader(leader.locks, election);
    assertThat(seen).isPresent();
    assertThat(seen.get().node()).contains(leader.locks.config().nodeName());
    assertThat(holderPids(connect(), key)).containsExactly(seen.get().pid());
    assertThat(LeaderElection.currentLeader(leader.locks, election + "-nobody")).isEmpty();
    assertSerialOrderedAndIncreasing();
  }

  @Test
  void close_leader_revokedWithShutdownBeforeStandbyElected() throws Exception {
    List<Node> nodes = List.of(node("a"), node("b"), node("c"));
    Event first = awaitElected(1);
    LockKey key = key(nodes.get(0));
    await("two standbys waiting on the server", WAIT, () -> serverWaiters(key) == 2);

    long closing = System.nanoTime();
    byName(nodes, first.node()).election().close();
    Event revoked = awaitRevoked(first.node(), Revocation.SHUTDOWN);
    Event second = awaitElected(2);

    System.out.printf("clean handover: standby elected %.1f ms after close() began%n", (second.nanos() - closing) / 1e6);
    assertThat(second.node()).isNotEqualTo(first.node());
    assertThat(revoked.nanos()).as("old revoked before the new elected").isLessThan(second.nanos());
    assertThat(Duration.ofNanos(second.nanos() - closing)).isLessThan(Duration.ofSeconds(1));
    assertThat(byName(nodes, first.node()).election().isLeader()).isFalse();
    await("one standby left waiting", WAIT, () -> serverWaiters(key) == 1);
    assertThat(elected()).hasSize(2);
    assertSerialOrderedAndIncreasing();
  }

  @Test
  void terminateBackend_leader_revokedConnectionLost_otherElected_termsIncrease() throws Exception {
    List<Node> nodes = List.of(node("a"), node("b"));
    Event first = awaitElected(1);
    LockKey key = key(nodes.get(0));
    Connection admin = connect();
    await("a standby waiting on the server", WAIT, () -> serverWaiters(key) == 1);
    List<Integer> pids = holderPids(admin, key);
    assertThat(pids).hasSize(1);

    long terminated = System.nanoTime();
    try (PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(?, 10000)")) {
      ps.setInt(1, pids.get(0));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getBoolean(1)).isTrue();
      }
    }
    Event second = awaitElected(2);
    Event revoked = awaitRevoked(first.node(), Revocation.CONNECTION_LOST);

    System.out.printf("pg_terminate_backend: new leader elected after %.1f ms, old revoked after %.1f ms%n",
        (second.nanos() - terminated) / 1e6, (revoked.nanos() - terminated) / 1e6);
    assertThat(second.node()).isNotEqualTo(first.node());
    assertThat(second.token()).isGreaterThan(first.token());
    // The former leader stands again, on a new connection.
    await("the former leader waiting again", WAIT, () -> serverWaiters(key) == 1);
    assertThat(byName(nodes, first.node()).election().isLeader()).isFalse();
    assertThat(byName(nodes, second.node()).election().isLeader()).isTrue();
    assertSerialOrderedAndIncreasing();
  }

  @Test
  void reportBroken_leader_otherElected_brokenStandsAgainOnlyAfterBackoff() throws Exception {
    Duration backoff = Duration.ofMillis(1000);
    Node a = new Node("a").join(b -> b.brokenBackoff(backoff, backoff.plusMillis(200)));
    awaitElected(1);
    Node b = node("b");
    LockKey key = key(a);
    await("b waiting on the server", WAIT, () -> serverWaiters(key) == 1);

    long reported = System.nanoTime();
    a.election().reportBroken(new IllegalStateException("test: the daemon broke"));
    Event second = awaitElected(2);
    Event revoked = awaitRevoked("a", Revocation.BROKEN);
    long looked = System.nanoTime();
    int waitersDuringBackoff = serverWaiters(key);
    boolean lookedInTime = System.nanoTime() - reported < backoff.toNanos();

    assertThat(second.node()).isEqualTo("b");
    assertThat(revoked.nanos()).as("a revoked before b elected").isLessThan(second.nanos());
    if (lookedInTime) {
      assertThat(waitersDuringBackoff).as("a does not stand during its back-off (looked %.0f ms after the report)",
          (looked - reported) / 1e6).isZero();
    }
    b.election().close();
    Event third = awaitElected(3);
    assertThat(third.node()).isEqualTo("a");
    assertThat(Duration.ofNanos(third.nanos() - reported)).as("a elected again only after its back-off")
        .isGreaterThanOrEqualTo(backoff);
    assertThat(third.token()).isGreaterThan(second.token());
    assertSerialOrderedAndIncreasing();
  }

  @Test
  void callbacks_resignFromElected_serialOrderedOnElectionThread() throws Exception {
    Node a = new Node("a");
    AtomicInteger resigns = new AtomicInteger();
    a.onElected = t -> {
      if (resigns.getAndIncrement() < 5) {
        // the first term can begin before join() has returned the election to the test
        await("join() returned", WAIT, () -> a.election() != null);
        a.election().resign(); // from the callback: the term ends once it returns
      }
      return t;
    };
    a.join(b -> b.firstAttemptJitter(Duration.ZERO));
    awaitElected(6);
    await("a leads", WAIT, () -> a.election().isLeader());

    List<Event> all = events();
    assertThat(all).hasSize(11);
    assertThat(all.stream().filter(e -> !e.elected()).map(Event::reason)).containsOnly(Revocation.RELEASED);
    assertSerialOrderedAndIncreasing();
    a.election().close();
    assertThat(a.election().isLeader()).isFalse();
    List<Event> after = events();
    assertThat(after).hasSize(12);
    assertThat(after.get(11).reason()).isEqualTo(Revocation.SHUTDOWN);
    await("the lock released by close() (asynchronously)", WAIT, () -> a.locks.heldLocks() == 0);
  }

  @Test
  void elected_throws_termEndsBroken_andLockGoesToStandby() throws Exception {
    Node a = new Node("a");
    a.onElected = t -> {
      throw new IllegalStateException("test: elected fails");
    };
    a.join(b -> b.firstAttemptJitter(Duration.ZERO).brokenBackoff(Duration.ofSeconds(5), Duration.ofSeconds(5)));
    awaitElected(1);
    Node b = node("b");
    Event second = awaitElected(2);
    assertThat(second.node()).isEqualTo("b");
    awaitRevoked("a", Revocation.BROKEN);
    assertThat(LogCapture.drainErrors()).singleElement().asString().contains("elected callback threw");
    assertSerialOrderedAndIncreasing();
  }
}
