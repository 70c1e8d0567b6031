package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Semaphores in one JVM: the count, waiting, timeouts, interrupts, loss, disagreement on N, bad input. */
class SemaphoreTest extends PgLocksTestSupport {

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(db().dataSource(), "pglock"); // for pglock.key(..) in SQL
  }

  @Test
  void tryAcquire_nPermits_nHoldersGetDistinctPermits_thenFullForEveryone() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    Connection c = connect();
    SessionSemaphore sem = a.semaphore("pool", 3);
    List<LockHandle> held = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      held.add(sem.tryAcquire().orElseThrow(() -> new AssertionError("a permit should be free")));
    }
    Set<LockKey> keys = new HashSet<>();
    held.forEach(h -> keys.add(h.key()));
    assertThat(keys).containsExactlyInAnyOrder(sem.permitKey(0), sem.permitKey(1), sem.permitKey(2));
    for (int i = 0; i < 3; i++) {
      assertThat(serverHolders(c, sem.permitKey(i))).as("server holders of permit %d", i).isEqualTo(1);
    }
    assertThat(sem.tryAcquire()).as("a fourth permit from the same instance").isEmpty();
    assertThat(b.semaphore("pool", 3).tryAcquire()).as("a fourth permit from another instance").isEmpty();

    LockHandle freed = held.remove(1);
    freed.close();
    try (LockHandle got = b.semaphore("pool", 3).acquire(Duration.ofSeconds(10))) {
      assertThat(got.key()).isEqualTo(freed.key());
      assertThat(got.isHeld()).isTrue();
      assertThat(sem.tryAcquire()).isEmpty();
    }
    held.forEach(LockHandle::close);
  }

  @Test
  void permitKeys_areTheSqlKeysOfReservedNames_andASqlHolderTakesAPermit() throws Exception {
    PgLocks locks = newLocks();
    Connection raw = connect();
    SessionSemaphore sem = locks.semaphore("sql", 1);
    try (PreparedStatement ps = raw.prepareStatement("SELECT pglock.key('test', 'semaphore:sql#0')");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      assertThat(rs.getLong(1)).isEqualTo(sem.permitKey(0).int64());
    }
    assertThat(sem.permitKey(0)).isEqualTo(LockKey.named("test", "semaphore:sql#0"));

    assertThat(queryBoolean(raw, "SELECT pg_try_advisory_lock(?)", sem.permitKey(0).int64())).isTrue();
    assertThat(sem.tryAcquire()).as("the only permit, held in plain SQL").isEmpty();
    try (LockHandle plain = locks.lock("sql").tryAcquire().orElseThrow()) {
      assertThat(plain.isHeld()).as("the lock of the semaphore's bare name is another lock").isTrue();
    }
    assertThat(queryBoolean(raw, "SELECT pg_advisory_unlock(?)", sem.permitKey(0).int64())).isTrue();
    try (LockHandle h = sem.tryAcquire().orElseThrow()) {
      assertThat(h.key()).isEqualTo(sem.permitKey(0));
    }
  }

  @Test
  void acquire_full_waiterGetsAPermitFreedOtherThanTheOneItWaitsOn() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    SessionSemaphore sem = a.semaphore("wait", 2);
    LockHandle first = sem.tryAcquire().orElseThrow();
    LockHandle second = sem.tryAcquire().orElseThrow();
    Future<LockHandle> waiting = inBackground(() -> b.semaphore("wait", 2).acquire(Duration.ofSeconds(30)));
    await("the waiter blocks on the server on one permit", Duration.ofSeconds(10),
        () -> serverWaiters(sem.permitKey(0)) + serverWaiters(sem.permitKey(1)) == 1);
    int waitedOn = serverWaiters(sem.permitKey(0)) == 1 ? 0 : 1;
    LockHandle other = first.key().equals(sem.permitKey(waitedOn)) ? second : first;
    LockHandle stays = other == first ? second : first;

    long released = System.nanoTime();
    other.close();
    try (LockHandle got = waiting.get(30, TimeUnit.SECONDS)) {
      long millis = (System.nanoTime() - released) / 1_000_000;
      System.out.println("semaphore: a permit other than the one waited on was taken " + millis + " ms after release");
      assertThat(got.key()).as("the freed permit").isEqualTo(other.key());
      assertThat(got.isHeld()).isTrue();
      // Found at the next round of tries: within one wait chunk (200 ms) and a round, with slack.
      assertThat(millis).isLessThan(2_000);
    }
    stays.close();
  }

  @Test
  void acquire_full_timesOutWithClearMessageAndHoldsNothing() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    SessionSemaphore full = a.semaphore("timeout", 2);
    LockHandle h1 = full.tryAcquire().orElseThrow();
    LockHandle h2 = full.tryAcquire().orElseThrow();
    SessionSemaphore sem = b.semaphore("timeout", 2);

    long start = System.nanoTime();
    assertThatThrownBy(() -> sem.acquire(Duration.ofMillis(300)))
        .isInstanceOf(LockTimeoutException.class)
        .hasMessageContaining("a permit of SessionSemaphore[test:timeout, 2 permits]")
        .hasMessageContaining("pglock.key('test', 'semaphore:timeout#0') to #1");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(300), Duration.ofSeconds(5));
    assertThat(sem.tryAcquire(Duration.ZERO)).isEmpty();
    start = System.nanoTime();
    assertThat(sem.tryAcquire(Duration.ofMillis(200))).isEmpty();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
    assertThat(b.heldLocks()).isZero();
    await("no waiter left on the server", Duration.ofSeconds(5), () -> serverWaiters() == 0);
    h1.close();
    h2.close();
  }

  @Test
  void acquire_interruptedWhileWaiting_throwsAndHoldsNothing() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    SessionSemaphore sem = a.semaphore("interrupt", 2);
    LockHandle h1 = sem.tryAcquire().orElseThrow();
    LockHandle h2 = sem.tryAcquire().orElseThrow();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Throwable> f = pool.submit(() -> {
        try {
          b.semaphore("interrupt", 2).acquire().close();
          return null;
        } catch (InterruptedException e) {
          return e;
        }
      });
      await("the waiter blocks on the server", Duration.ofSeconds(10),
          () -> serverWaiters(sem.permitKey(0)) + serverWaiters(sem.permitKey(1)) == 1);
      pool.shutdownNow();
      assertThat(f.get(10, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
      await("the server wait is cancelled", Duration.ofSeconds(10), () -> serverWaiters() == 0);
      assertThat(b.heldLocks()).isZero();
    } finally {
      pool.shutdownNow();
    }
    h1.close();
    try (LockHandle again = b.semaphore("interrupt", 2).acquire(Duration.ofSeconds(10))) {
      assertThat(again.key()).isEqualTo(h1.key());
    }
    h2.close();
  }

  @Test
  void tryAcquire_interruptedBefore_throwsAndClearsTheInterrupt() {
    SessionSemaphore sem = newLocks().semaphore("pre-interrupt", 1);
    Thread.currentThread().interrupt();
    assertThatThrownBy(() -> sem.tryAcquire(Duration.ofSeconds(1))).isInstanceOf(InterruptedException.class)
        .hasMessageContaining("interrupted before acquiring a permit of SessionSemaphore[test:pre-interrupt");
    assertThat(Thread.interrupted()).isFalse();
    Thread.currentThread().interrupt();
    assertThatThrownBy(sem::acquire).isInstanceOf(InterruptedException.class);
    assertThat(Thread.interrupted()).isFalse();
  }

  @Test
  void permit_backendTerminated_reportsLoss_andTheServerFreedThePermit() throws Exception {
    String node = "sem-term-" + UUID.randomUUID().toString().substring(0, 8);
    PgLocks holder = track(builder().nodeName(node).build());
    PgLocks other = newLocks();
    LockHandle h = holder.semaphore("term", 1).tryAcquire().orElseThrow();
    CompletableFuture<LossCause> callback = new CompletableFuture<>();
    h.onLoss(callback::complete);
    Connection admin = connect();
    assertThat(other.semaphore("term", 1).tryAcquire()).isEmpty();

    int pid = lockSessionPid(admin, node);
    assertThat(holderPids(admin, h.key())).containsExactly(pid);
    try (PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(?, 10000)")) {
      ps.setInt(1, pid); // only the lock session this test opened; waits until its locks are free
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getBoolean(1)).isTrue();
      }
    }
    assertThat(h.lost().toCompletableFuture().get(30, TimeUnit.SECONDS)).isEqualTo(LossCause.CONNECTION_LOST);
    assertThat(callback.get(10, TimeUnit.SECONDS)).isEqualTo(LossCause.CONNECTION_LOST);
    assertThat(h.state()).isEqualTo(HandleState.LOST);
    assertThat(h.isHeld()).isFalse();
    try (LockHandle taken = other.semaphore("term", 1).tryAcquire().orElseThrow()) {
      assertThat(taken.key()).isEqualTo(h.key());
    }
    h.close();
  }

  @Test
  void disagreementOnPermits_atMostTheLargerNumber_andTheSmallerSeesFullFirst() throws Exception {
    PgLocks three = newLocks();
    PgLocks five = newLocks();
    SessionSemaphore small = three.semaphore("disagree", 3);
    SessionSemaphore large = five.semaphore("disagree", 5);
    List<LockHandle> held = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      held.add(large.tryAcquire().orElseThrow());
    }
    assertThat(large.tryAcquire()).isEmpty();
    assertThat(small.tryAcquire()).isEmpty();
    // Give back permits 3 and 4, which only the larger semaphore uses: three holders remain.
    for (LockHandle h : List.copyOf(held)) {
      if (h.key().equals(large.permitKey(3)) || h.key().equals(large.permitKey(4))) {
        h.close();
        held.remove(h);
      }
    }
    assertThat(held).hasSize(3);
    assertThat(small.tryAcquire(Duration.ofMillis(100))).as("the smaller semaphore, with 3 holders").isEmpty();
    LockHandle fourth = large.tryAcquire(Duration.ofSeconds(10)).orElseThrow();
    assertThat(fourth.key()).isIn(large.permitKey(3), large.permitKey(4));
    held.add(fourth);
    // Give back permit 0, which both use: whoever asks first gets it, and the total stays at most 5.
    LockHandle zero = held.stream().filter(h -> h.key().equals(large.permitKey(0))).findFirst().orElseThrow();
    zero.close();
    held.remove(zero);
    LockHandle taken = small.tryAcquire(Duration.ofSeconds(10)).orElseThrow();
    assertThat(taken.key()).isEqualTo(small.permitKey(0));
    held.add(taken);
    held.add(large.tryAcquire().orElseThrow());
    assertThat(large.tryAcquire()).isEmpty();
    assertThat(small.tryAcquire()).isEmpty();
    assertThat(three.heldLocks() + five.heldLocks()).isEqualTo(5);
    held.forEach(LockHandle::close);
  }

  @Test
  void manyThreadsOfTwoInstances_neverMoreHoldersThanPermits() throws Exception {
    PgLocks a = newLocks();
    PgLocks b = newLocks();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    AtomicInteger rounds = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < 6; t++) {
        SessionSemaphore sem = (t % 2 == 0 ? a : b).semaphore("threads", 2);
        workers.add(pool.submit(() -> {
          for (int i = 0; i < 30; i++) {
            try (LockHandle h = sem.acquire(Duration.ofSeconds(30))) {
              maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
              Thread.sleep(1); // the simulated work, so that holders overlap
              inside.decrementAndGet();
            }
            rounds.incrementAndGet();
          }
          return null;
        }));
      }
      for (Future<?> w : workers) {
        w.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(rounds.get()).isEqualTo(180);
    assertThat(maxInside.get()).isLessThanOrEqualTo(2);
    assertThat(maxInside.get()).as("six threads fill both permits").isEqualTo(2);
  }

  @Test
  void accessors_andToString() {
    SessionSemaphore sem = newLocks().semaphore("exports", 4);
    assertThat(sem.name()).isEqualTo("exports");
    assertThat(sem.permits()).isEqualTo(4);
    assertThat(sem).hasToString("SessionSemaphore[test:exports, 4 permits]");
    assertThat(sem.permitKey(3)).hasToString("name:test:semaphore:exports#3");
    assertThatThrownBy(() -> sem.permitKey(4)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("semaphore \"exports\" has permits 0 to 3, not 4");
    assertThatThrownBy(() -> sem.permitKey(-1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void semaphore_badInput_isRefusedNamingTheFix() {
    PgLocks locks = newLocks();
    assertThatThrownBy(() -> locks.semaphore(null, 2)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("semaphore name must not be null");
    assertThatThrownBy(() -> locks.semaphore(" ", 2)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("semaphore name must not be blank: \" \"");
    assertThatThrownBy(() -> locks.semaphore("s", 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("semaphore \"s\" must have from 1 to 1024 permits, not 0; give it at least one");
    assertThatThrownBy(() -> locks.semaphore("s", -3)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not -3");
    assertThatThrownBy(() -> locks.semaphore("s", 1025)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not 1025; a try costs up to one round trip per permit");
    assertThatThrownBy(() -> locks.semaphore("x".repeat(498), 2)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("semaphore name is 498 UTF-8 bytes, longer than 497");
    SessionSemaphore longest = locks.semaphore("x".repeat(497), SessionSemaphore.MAX_PERMITS);
    assertThat(longest.permitKey(1023).name()).hasSize(LockKey.MAX_NAME_BYTES);
  }

  @Test
  void closedPgLocks_refusesNewSemaphoresAndAcquires() {
    PgLocks locks = newLocks();
    SessionSemaphore sem = locks.semaphore("closed", 2);
    locks.close();
    assertThatThrownBy(sem::tryAcquire).isInstanceOf(PgLocksClosedException.class);
    assertThatThrownBy(() -> sem.acquire(Duration.ofSeconds(1))).isInstanceOf(PgLocksClosedException.class);
    assertThatThrownBy(() -> locks.semaphore("closed", 2)).isInstanceOf(PgLocksClosedException.class);
  }

  @Test
  void transactionLocksOnly_refusesSemaphores() {
    PgLocks locks = track(builder().transactionLocksOnly().build());
    assertThatThrownBy(() -> locks.semaphore("s", 2)).isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("transactionLocksOnly()");
  }

  /** The pid of the node's one lock session, found by its application_name. */
  private static int lockSessionPid(Connection admin, String node) throws SQLException {
    try (PreparedStatement ps = admin.prepareStatement("""
        SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND application_name LIKE 'pglock:' || ? || ':lock-%'""")) {
      ps.setString(1, node);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("a lock session of node %s", node).isTrue();
        return rs.getInt(1);
      }
    }
  }
}
