package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Fencing tokens on a real PostgreSQL: they come with the grant, increase strictly with every grant
 * (whichever instance, thread, session or path got it), and the SQL check refuses a stale one.
 */
class FencingTest extends PgLocksTestSupport {

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  private PgLocks fencedLocks() {
    return track(builder().fencing().build());
  }

  @Test
  void everyGrantCarriesAStrictlyLargerToken_acrossInstances() {
    PgLocks a = fencedLocks();
    PgLocks b = fencedLocks();
    long last = 0;
    for (int i = 0; i < 6; i++) {
      PgLocks locks = i % 2 == 0 ? a : b;
      try (LockHandle h = locks.lock("fenced-seq").tryAcquire().orElseThrow()) {
        assertThat(h.fencingToken()).isGreaterThan(last);
        last = h.fencingToken();
      }
      awaitFree(locks.key("fenced-seq"));
    }
  }

  @Test
  void perLockOptIn_withFencing_andClearErrors() throws Exception {
    PgLocks locks = newLocks(); // not built with fencing()
    SessionLock plain = locks.lock("fenced-optin");
    assertThat(plain.fenced()).isFalse();
    SessionLock fenced = plain.withFencing();
    assertThat(fenced.fenced()).isTrue();
    assertThat(fenced.withFencing()).isSameAs(fenced);
    try (LockHandle h = plain.tryAcquire().orElseThrow()) {
      assertThatThrownBy(h::fencingToken).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("withFencing()");
    }
    awaitFree(locks.key("fenced-optin"));
    try (LockHandle h = fenced.acquire(Duration.ofSeconds(5))) {
      assertThat(h.fencingToken()).isPositive();
    }
    assertThatThrownBy(() -> locks.readWriteLock("fenced-optin").readLock().withFencing())
        .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("exclusive");
  }

  @Test
  void fencing_withoutTheSchema_isSchemaMissingException_namingTheFix() {
    assertThatThrownBy(() -> builder().schema("pglock_not_installed").fencing().build())
        .isInstanceOf(SchemaMissingException.class)
        .hasMessageContaining("PgLockSchema.migrate").hasMessageContaining("pglock_not_installed");
    PgLocks locks = track(builder().schema("pglock_not_installed").build()); // fine without fencing
    assertThatThrownBy(() -> locks.lock("x").withFencing()).isInstanceOf(SchemaMissingException.class);
    assertThatThrownBy(() -> builder().schema("Bad-Schema")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lower-case SQL identifier");
  }

  @Test
  void localWaiter_getsItsOwnTokenFromTheServer_notAHandoff() throws Exception {
    PgLocks locks = fencedLocks();
    LockHandle first = locks.lock("fenced-local").tryAcquire().orElseThrow();
    Future<LockHandle> second = inBackground(() -> locks.lock("fenced-local").acquire(Duration.ofSeconds(20)));
    await("the second thread queues here", Duration.ofSeconds(5), () -> !second.isDone() && queuedLocally(locks));
    long firstToken = first.fencingToken();
    first.close();
    try (LockHandle h = second.get(20, TimeUnit.SECONDS)) {
      assertThat(h.fencingToken()).isGreaterThan(firstToken);
    }
  }

  @Test
  void waitOnAWaitSession_carriesAToken() throws Exception {
    PgLocks locks = fencedLocks();
    PgLocks other = fencedLocks();
    LockHandle held = other.lock("fenced-wait").tryAcquire().orElseThrow();
    Future<LockHandle> waiting = inBackground(() -> locks.lock("fenced-wait").acquire(Duration.ofSeconds(20)));
    await("the wait reaches the server", Duration.ofSeconds(10), () -> serverWaiters(locks.key("fenced-wait")) == 1);
    long heldToken = held.fencingToken();
    held.close();
    try (LockHandle h = waiting.get(20, TimeUnit.SECONDS)) {
      assertThat(h.fencingToken()).isGreaterThan(heldToken);
    }
  }

  @Test
  void manyConcurrentFencedAcquires_batched_eachKeyStrictlyIncreasing() throws Exception {
    PgLocks locks = fencedLocks();
    int threads = 24;
    int rounds = 15;
    Map<String, List<Long>> tokens = new ConcurrentHashMap<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Future<Void>> all = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      String name = "fenced-batch-" + (t % 8); // 3 threads per key: waits, retries and batches mix
      all.add(inBackground(() -> {
        start.await();
        for (int r = 0; r < rounds; r++) {
          try (LockHandle h = locks.lock(name).acquire(Duration.ofSeconds(30))) {
            tokens.computeIfAbsent(name, k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                .add(h.fencingToken());
          }
        }
        return null;
      }));
    }
    start.countDown();
    for (Future<Void> f : all) {
      f.get(120, TimeUnit.SECONDS);
    }
    for (Map.Entry<String, List<Long>> e : tokens.entrySet()) {
      List<Long> seen = e.getValue();
      // the grants of one key are serial: the tokens, in the order the grants came, strictly increase
      assertThat(seen).hasSize(3 * rounds).isSorted().doesNotHaveDuplicates();
    }
  }

  @Test
  void sqlCheck_refusesAStaleToken_andAcceptsTheNewest() throws Exception {
    PgLocks locks = fencedLocks();
    long old;
    try (LockHandle h = locks.lock("fenced-check").tryAcquire().orElseThrow()) {
      old = h.fencingToken();
    }
    awaitFree(locks.key("fenced-check"));
    LockHandle now = locks.lock("fenced-check").tryAcquire().orElseThrow();
    Connection c = connect();
    c.setAutoCommit(false);
    assertThat(accept(c, "fenced-check", now.fencingToken())).isTrue();
    assertThat(accept(c, "fenced-check", now.fencingToken())).as("the same holder writes again").isTrue();
    assertThat(accept(c, "fenced-check", old)).isFalse();
    c.commit();
    assertThatThrownBy(() -> check(c, "fenced-check", old)).isInstanceOf(SQLException.class)
        .hasMessageContaining("is stale").extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("PGF01");
    c.rollback();
    check(c, "fenced-check", now.fencingToken());
    c.commit();
    now.close();
  }

  @Test
  void formerHoldersWriteInFlight_isAppliedBeforeTheNewHoldersWrite_andThenRefused() throws Exception {
    PgLocks locks = fencedLocks();
    PgLocks other = fencedLocks();
    LockHandle h = locks.lock("fenced-inflight").tryAcquire().orElseThrow();
    Connection oldWriter = connect();
    oldWriter.setAutoCommit(false);
    check(oldWriter, "fenced-inflight", h.fencingToken()); // the holder's write is under way...
    h.close(); // ...when its lock goes (a pause, a lost lease)
    awaitFree(locks.key("fenced-inflight"));
    LockHandle next = other.lock("fenced-inflight").tryAcquire().orElseThrow(); // the grant does not wait
    assertThat(next.fencingToken()).isGreaterThan(h.fencingToken());
    Connection newWriter = connect();
    newWriter.setAutoCommit(false);
    Future<Long> newCheck = inBackground(() -> {
      long start = System.nanoTime();
      check(newWriter, "fenced-inflight", next.fencingToken());
      return System.nanoTime() - start;
    });
    await("the new holder's check waits for the former write", Duration.ofSeconds(10),
        () -> blockedBackends(oldWriter) == 1);
    assertThat(newCheck).isNotDone();
    oldWriter.commit(); // the former write lands first...
    newCheck.get(10, TimeUnit.SECONDS); // ...then the new holder's check passes
    newWriter.commit();
    assertThatThrownBy(() -> check(oldWriter, "fenced-inflight", h.fencingToken())) // and the former holder is refused
        .isInstanceOf(SQLException.class).hasMessageContaining("is stale");
    oldWriter.rollback();
    next.close();
  }

  /** How many backends wait for a lock the given connection's backend holds. */
  private static int blockedBackends(Connection holder) {
    try (Connection c = db().connect(); PreparedStatement ps = c.prepareStatement(
        "SELECT count(*) FROM pg_stat_activity WHERE ? = ANY (pg_blocking_pids(pid))")) {
      ps.setInt(1, pidOf(holder));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  private static int pidOf(Connection c) throws SQLException {
    return c.unwrap(org.postgresql.PGConnection.class).getBackendPID();
  }

  private void awaitFree(LockKey key) {
    try {
      Connection c = connect();
      await("the release of " + key + " reaches the server", Duration.ofSeconds(10), () -> holders(c, key) == 0);
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  private static boolean queuedLocally(PgLocks locks) {
    return locks.heldLocks() == 1; // the holder's lock only: the waiter sent nothing to the server
  }

  private static boolean accept(Connection c, String name, long token) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pglock.accept_fencing_token(?, ?, ?)")) {
      ps.setString(1, "test");
      ps.setString(2, name);
      ps.setLong(3, token);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  private static void check(Connection c, String name, long token) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pglock.check_fencing_token(?, ?, ?)")) {
      ps.setString(1, "test");
      ps.setString(2, name);
      ps.setLong(3, token);
      ps.execute();
    }
  }
}
