package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TransactionLocksTest extends PgLocksTestSupport {
  private static final int LIMIT = 5;
  private static final int WRITERS = 12;

  @BeforeEach
  void createTable() throws SQLException {
    try (Connection c = db().connect(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS rate_events");
      st.execute("CREATE TABLE rate_events (user_id int NOT NULL, at timestamptz NOT NULL DEFAULT now())");
    }
  }

  @AfterEach
  void dropTable() throws SQLException {
    try (Connection c = db().connect(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS rate_events");
    }
  }

  @Test
  void rateLimit_withTransactionLock_neverExceedsLimit() throws Exception {
    assertThat(runWriters(true)).isEqualTo(LIMIT);
  }

  @Test
  void rateLimit_withoutLock_exceedsLimit_soTheTestCanFail() throws Exception {
    assertThat(runWriters(false)).isGreaterThan(LIMIT);
  }

  /**
   * The rate-limit pattern: lock per user id, count, insert if under the limit, commit. Each writer
   * waits (bounded) after counting until every writer has counted, which makes the race certain
   * without the lock; with the lock the others cannot count meanwhile, so the wait just times out.
   */
  private int runWriters(boolean lock) throws Exception {
    PgLocks locks = newLocks();
    CountDownLatch counted = new CountDownLatch(WRITERS);
    ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < WRITERS; i++) {
        futures.add(pool.submit(() -> {
          try (Connection c = db().connect()) {
            c.setAutoCommit(false);
            if (lock) {
              locks.inTransaction(c).lock("user:7", Duration.ofSeconds(60));
            }
            int count;
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM rate_events WHERE user_id = 7");
                ResultSet rs = ps.executeQuery()) {
              rs.next();
              count = rs.getInt(1);
            }
            counted.countDown();
            if (count < LIMIT) {
              counted.await(300, TimeUnit.MILLISECONDS); // widens the race window (simulated work)
              try (PreparedStatement ps = c.prepareStatement("INSERT INTO rate_events(user_id) VALUES (7)")) {
                ps.execute();
              }
            }
            c.commit();
          }
          return null;
        }));
      }
      for (Future<?> f : futures) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    try (Connection c = connect(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM rate_events WHERE user_id = 7")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  @Test
  void inTransaction_autocommitOn_isClearError() throws SQLException {
    PgLocks locks = newLocks();
    Connection c = connect();
    assertThatThrownBy(() -> locks.inTransaction(c)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("autocommit").hasMessageContaining("setAutoCommit(false)");
  }

  @Test
  void lock_timeout_leavesTransactionUsable_andRestoresLockTimeout() throws Exception {
    PgLocks locks = newLocks();
    Connection holder = connect();
    holder.setAutoCommit(false);
    assertThat(locks.inTransaction(holder).tryLock("busy")).isTrue();

    Connection c = connect();
    c.setAutoCommit(false);
    try (Statement st = c.createStatement()) {
      st.execute("SET LOCAL lock_timeout = '7s'");
    }
    assertThatThrownBy(() -> locks.inTransaction(c).lock("busy", Duration.ofMillis(300)))
        .isInstanceOf(LockTimeoutException.class).hasMessageContaining("still usable");
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT current_setting('lock_timeout')")) {
      rs.next();
      assertThat(rs.getString(1)).isEqualTo("7s");
    }
    c.commit();
    holder.commit(); // releases the transaction lock
    c.setAutoCommit(false);
    assertThat(locks.inTransaction(c).tryLock("busy")).isTrue();
    c.rollback();
  }

  @Test
  void lock_sharedAndExclusive_exclude() throws Exception {
    PgLocks locks = newLocks();
    Connection a = connect();
    Connection b = connect();
    a.setAutoCommit(false);
    b.setAutoCommit(false);
    LockKey key = LockKey.of(3, 4);
    assertThat(locks.inTransaction(a).tryLock(key, LockMode.SHARED)).isTrue();
    assertThat(locks.inTransaction(b).tryLock(key, LockMode.SHARED)).isTrue();
    b.commit();
    assertThat(locks.inTransaction(b).tryLock(key, LockMode.EXCLUSIVE)).isFalse();
    a.commit();
    assertThat(locks.inTransaction(b).tryLock(key, LockMode.EXCLUSIVE)).isTrue();
    b.rollback();
  }

  @Test
  void deadlock_surfacesAsLockDeadlockException_forOneTransaction() throws Exception {
    PgLocks locks = newLocks();
    Connection a = connect();
    Connection b = connect();
    a.setAutoCommit(false);
    b.setAutoCommit(false);
    locks.inTransaction(a).lock("first", Duration.ofSeconds(5));
    locks.inTransaction(b).lock("second", Duration.ofSeconds(5));
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<Throwable> fa = pool.submit(() -> attempt(locks, a, "second"));
      Future<Throwable> fb = pool.submit(() -> attempt(locks, b, "first"));
      Throwable ra = fa.get(60, TimeUnit.SECONDS);
      Throwable rb = fb.get(60, TimeUnit.SECONDS);
      List<Throwable> errors = new ArrayList<>();
      if (ra != null) {
        errors.add(ra);
      }
      if (rb != null) {
        errors.add(rb);
      }
      assertThat(errors).hasSize(1);
      assertThat(errors.get(0)).isInstanceOf(LockDeadlockException.class).hasMessageContaining("deadlock");
    } finally {
      pool.shutdownNow();
      a.rollback();
      b.rollback();
    }
  }

  @Test
  void lock_interrupted_throwsInterruptedException_andTransactionStaysUsable() throws Exception {
    PgLocks locks = newLocks();
    Connection holder = connect();
    holder.setAutoCommit(false);
    assertThat(locks.inTransaction(holder).tryLock("held")).isTrue();
    Connection c = connect();
    c.setAutoCommit(false);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      CountDownLatch waiting = new CountDownLatch(1);
      Future<Throwable> f = pool.submit(() -> {
        waiting.countDown();
        try {
          locks.inTransaction(c).lock(locks.key("held"), LockMode.EXCLUSIVE);
          return null;
        } catch (InterruptedException e) {
          try (Statement st = c.createStatement()) {
            st.execute("SELECT 1");
          }
          return e;
        }
      });
      waiting.await();
      await("the waiter blocks on the server", Duration.ofSeconds(10), () -> serverWaiters() > 0);
      pool.shutdownNow(); // interrupts the waiter
      assertThat(f.get(10, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
    } finally {
      pool.shutdownNow();
      c.rollback();
      holder.rollback();
    }
  }

  @Test
  void tryLockByName_sharedMode_sharesWithShared_andExcludesExclusive() throws Exception {
    PgLocks locks = newLocks();
    Connection a = transaction();
    Connection b = transaction();
    assertThat(locks.inTransaction(a).tryLock("catalog", LockMode.SHARED)).isTrue();
    assertThat(locks.inTransaction(b).tryLock("catalog", LockMode.SHARED)).isTrue();
    assertThat(serverHolders(a, locks.key("catalog"))).isEqualTo(2);
    b.commit();
    assertThat(locks.inTransaction(b).tryLock("catalog")).isFalse();
    assertThat(locks.inTransaction(b).tryLock("catalog", LockMode.EXCLUSIVE, Duration.ofMillis(200))).isFalse();
    locks.inTransaction(b).lock("catalog", LockMode.SHARED, Duration.ofSeconds(5)); // joins the reader
    assertThat(serverHolders(a, locks.key("catalog"))).isEqualTo(2);
    a.commit();
    b.commit();
  }

  @Test
  void tryLockByName_withTimeout_returnsFalseOnTimeout_leavesTransactionUsable_andRestoresLockTimeout()
      throws Exception {
    PgLocks locks = newLocks();
    Connection holder = transaction();
    assertThat(locks.inTransaction(holder).tryLock("timed")).isTrue();
    Connection c = transaction();
    try (Statement st = c.createStatement()) {
      st.execute("SET LOCAL lock_timeout = '7s'");
    }
    long start = System.nanoTime();
    assertThat(locks.inTransaction(c).tryLock("timed", Duration.ofMillis(300))).isFalse();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(290));
    assertThat(lockTimeout(c)).isEqualTo("7s");
    assertThat(locks.inTransaction(c).tryLock("timed", Duration.ZERO)).isFalse();
    holder.commit();
    assertThat(locks.inTransaction(c).tryLock("timed", Duration.ofSeconds(5))).isTrue();
    assertThat(serverHolders(holder, locks.key("timed"))).isEqualTo(1);
    c.commit();
    assertThat(serverHolders(holder, locks.key("timed"))).isZero();
    holder.commit();
  }

  @Test
  void tryLockByName_withTimeout_isGrantedWhenTheHolderCommitsDuringTheWait() throws Exception {
    PgLocks locks = newLocks();
    Connection holder = transaction();
    assertThat(locks.inTransaction(holder).tryLock("handover", LockMode.SHARED)).isTrue();
    Connection c = transaction();
    Future<Boolean> waiter = inBackground(() -> locks.inTransaction(c).tryLock("handover", Duration.ofSeconds(30)));
    await("the waiter blocks on the server", Duration.ofSeconds(10), () -> waitersFor(locks.key("handover")) == 1);
    holder.commit();
    assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
    c.commit();
  }

  @Test
  void lockByName_withoutLimit_waitsUntilTheHolderCommits_inEitherMode() throws Exception {
    PgLocks locks = newLocks();
    for (LockMode mode : LockMode.values()) {
      Connection holder = transaction();
      assertThat(locks.inTransaction(holder).tryLock("forever")).isTrue();
      Connection c = transaction();
      Future<Object> waiter = inBackground(() -> {
        if (mode == LockMode.EXCLUSIVE) {
          locks.inTransaction(c).lock("forever");
        } else {
          locks.inTransaction(c).lock("forever", mode);
        }
        return null;
      });
      await("the waiter blocks on the server", Duration.ofSeconds(10), () -> waitersFor(locks.key("forever")) == 1);
      assertThat(waiter.isDone()).isFalse();
      holder.commit();
      waiter.get(10, TimeUnit.SECONDS);
      assertThat(serverHolders(holder, locks.key("forever"))).isEqualTo(1);
      assertThat(locks.inTransaction(holder).tryLock("forever")).isFalse();
      holder.rollback();
      c.commit();
    }
  }

  @Test
  void byName_badArguments_areClearErrors() throws Exception {
    PgLocks locks = newLocks();
    TransactionLocks tx = locks.inTransaction(transaction());
    assertThatThrownBy(() -> tx.tryLock("x", (Duration) null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> tx.tryLock("x", Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> tx.lock("x", (LockMode) null)).isInstanceOf(NullPointerException.class)
        .hasMessageContaining("mode");
    assertThatThrownBy(() -> tx.tryLock("x", (LockMode) null)).isInstanceOf(NullPointerException.class)
        .hasMessageContaining("mode");
  }

  /** A tracked connection with a transaction open (autocommit off). */
  private Connection transaction() throws SQLException {
    Connection c = connect();
    c.setAutoCommit(false);
    return c;
  }

  static String lockTimeout(Connection c) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT current_setting('lock_timeout')")) {
      rs.next();
      return rs.getString(1);
    }
  }

  /** Server waiters for one key (other tests may wait on other keys meanwhile). */
  static int waitersFor(LockKey key) {
    try (Connection c = db().connect(); PreparedStatement ps = c.prepareStatement("""
            SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND classid::bigint = ? AND objid::bigint = ? AND objsubid = ?""")) {
      ps.setLong(1, key.first() & 0xFFFF_FFFFL);
      ps.setLong(2, key.second() & 0xFFFF_FFFFL);
      ps.setInt(3, key.objsubid());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    } catch (SQLException e) {
      throw new RuntimeException(e);
    }
  }

  /** Tries the lock; the deadlock victim rolls back so the other can go on. */
  private static Throwable attempt(PgLocks locks, Connection c, String name) throws SQLException {
    try {
      locks.inTransaction(c).lock(name, Duration.ofSeconds(30));
      return null;
    } catch (LockDeadlockException | InterruptedException | LockTimeoutException e) {
      try (Statement st = c.createStatement()) {
        st.execute("SELECT 1"); // the savepoint kept the transaction usable
      }
      c.rollback();
      return e;
    }
  }
}
