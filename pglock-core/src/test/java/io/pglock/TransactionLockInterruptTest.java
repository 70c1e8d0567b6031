package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.fault.HoldingProxy;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Interrupts of transaction-lock waits, with the race between the interrupt and the statements of
 * the wait widened by a {@link HoldingProxy} between the waiter's connection and PostgreSQL.
 * PostgreSQL drops a cancel that reaches a backend between statements; the wait must still end.
 */
class TransactionLockInterruptTest extends PgLocksTestSupport {
  private static final String WAIT_STATEMENT = "SELECT pg_advisory_xact_lock";
  private static final Pattern URL = Pattern.compile("jdbc:postgresql://([^:/?]+)(?::(\\d+))?/(.*)");

  /** What the waiter saw: the exception (or null), its interrupt flag after the call, and a probe. */
  record WaitResult(Throwable thrown, boolean interruptedAfter, String lockTimeoutAfter) {}

  /** Regression: the one cancel of the old canceller reached the backend before the wait statement. */
  @Test
  void lock_interruptedWhileTheWaitStatementIsInFlight_cancelDroppedBetweenStatements_throwsInterrupted()
      throws Exception {
    PgLocks locks = newLocks();
    Connection holder = transaction(connect());
    assertThat(locks.inTransaction(holder).tryLock("in-flight")).isTrue();
    HoldingProxy proxy = track(proxy(WAIT_STATEMENT, HoldingProxy.Hold.REQUEST));
    Connection c = transaction(connectThrough(proxy));
    int pid = backendPid(c);
    Connection observer = connect(); // autocommit: pg_stat_activity is read once per transaction

    AtomicReference<Thread> thread = new AtomicReference<>();
    Future<WaitResult> waiter = inBackground(() -> {
      thread.set(Thread.currentThread());
      return waitAndProbe(c, () -> locks.inTransaction(c).lock("in-flight", Duration.ofSeconds(10)));
    });
    await("the wait statement is held before the server", Duration.ofSeconds(10), proxy::markerSeen);
    thread.get().interrupt();
    await("a cancel reached the idle backend (and was dropped)", Duration.ofSeconds(10),
        () -> proxy.cancelsDone() >= 1);
    long released = System.nanoTime();
    proxy.release();

    WaitResult r = waiter.get(30, TimeUnit.SECONDS);
    System.out.println(String.format("transaction lock: wait statement reached the server after the dropped cancel; "
        + "InterruptedException %.1f ms later, after %d cancels in all (information)",
        (System.nanoTime() - released) / 1e6, proxy.cancelsDone()));
    assertThat(r.thrown()).as("old code: LockTimeoutException after 10 s").isInstanceOf(InterruptedException.class);
    assertThat(r.interruptedAfter()).as("flag cleared with the InterruptedException").isFalse();
    assertThat(r.lockTimeoutAfter()).as("transaction usable, lock_timeout restored").isEqualTo(lockTimeout(holder));
    assertThat(advisoryLocksOf(observer, pid)).as("nothing held or awaited by the waiter").isZero();
    c.rollback();
    holder.rollback();
  }

  @Test
  void lock_interruptedWhileTheSavepointIsInFlight_throwsInterrupted_andTheTransactionStaysUsable()
      throws Exception {
    PgLocks locks = newLocks();
    Connection holder = transaction(connect());
    assertThat(locks.inTransaction(holder).tryLock("savepoint")).isTrue();
    HoldingProxy proxy = track(proxy("SAVEPOINT pglock_wait", HoldingProxy.Hold.REQUEST));
    Connection c = transaction(connectThrough(proxy));
    int pid = backendPid(c);
    Connection observer = connect(); // autocommit: pg_stat_activity is read once per transaction

    AtomicReference<Thread> thread = new AtomicReference<>();
    Future<WaitResult> waiter = inBackground(() -> {
      thread.set(Thread.currentThread());
      return waitAndProbe(c, () -> locks.inTransaction(c).lock("savepoint"));
    });
    await("the savepoint is held before the server", Duration.ofSeconds(10), proxy::markerSeen);
    thread.get().interrupt();
    proxy.release();

    WaitResult r = waiter.get(30, TimeUnit.SECONDS);
    assertThat(r.thrown()).isInstanceOf(InterruptedException.class);
    assertThat(r.interruptedAfter()).isFalse();
    assertThat(r.lockTimeoutAfter()).isEqualTo(lockTimeout(holder));
    assertThat(advisoryLocksOf(observer, pid)).isZero();
    c.rollback();
    holder.rollback();
  }

  /**
   * Granted while interrupted: the call returns normally with the flag set, and the cancels sent
   * meanwhile (at least two, all reaching an idle backend) hit none of the statements after it.
   */
  @Test
  void lock_grantedAsTheInterruptComes_returnsWithTheFlagSet_andNoCancelHitsLaterStatements() throws Exception {
    PgLocks locks = newLocks();
    Connection holder = transaction(connect());
    assertThat(locks.inTransaction(holder).tryLock("granted")).isTrue();
    HoldingProxy proxy = track(proxy(WAIT_STATEMENT, HoldingProxy.Hold.REPLY));
    Connection c = transaction(connectThrough(proxy));
    int pid = backendPid(c);
    Connection observer = connect(); // autocommit: pg_stat_activity is read once per transaction

    AtomicReference<Thread> thread = new AtomicReference<>();
    Future<WaitResult> waiter = inBackground(() -> {
      thread.set(Thread.currentThread());
      return waitAndProbe(c, () -> locks.inTransaction(c).lock("granted", Duration.ofSeconds(30)));
    });
    await("the wait statement reached the server", Duration.ofSeconds(10), proxy::markerSeen);
    holder.commit(); // the server grants the lock; the proxy holds the reply
    await("the server granted the lock and the backend is idle", Duration.ofSeconds(10),
        () -> idleInTransaction(observer, pid));
    thread.get().interrupt();
    await("two cancels reached the idle backend", Duration.ofSeconds(10), () -> proxy.cancelsDone() >= 2);
    proxy.release();

    WaitResult r = waiter.get(30, TimeUnit.SECONDS);
    assertThat(r.thrown()).isNull();
    assertThat(r.interruptedAfter()).as("granted: the interrupt stays set for the caller").isTrue();
    assertThat(r.lockTimeoutAfter()).isEqualTo(lockTimeout(holder));
    assertThat(serverHolders(holder, locks.key("granted"))).isEqualTo(1);
    assertThat(locks.inTransaction(holder).tryLock("granted")).isFalse();
    c.rollback();
    holder.rollback();
  }

  /** Timed out on the server as the interrupt came: the timeout is reported, the flag stays set. */
  @Test
  void tryLock_timedOutAsTheInterruptComes_returnsFalse_andLeavesTheFlagSet() throws Exception {
    PgLocks locks = newLocks();
    Connection holder = transaction(connect());
    assertThat(locks.inTransaction(holder).tryLock("late")).isTrue();
    HoldingProxy proxy = track(proxy(WAIT_STATEMENT, HoldingProxy.Hold.REPLY));
    Connection c = transaction(connectThrough(proxy));
    int pid = backendPid(c);
    Connection observer = connect();

    AtomicReference<Thread> thread = new AtomicReference<>();
    AtomicReference<Boolean> granted = new AtomicReference<>();
    Future<WaitResult> waiter = inBackground(() -> {
      thread.set(Thread.currentThread());
      return waitAndProbe(c, () -> granted.set(locks.inTransaction(c).tryLock("late", Duration.ofMillis(200))));
    });
    await("lock_timeout ended the wait on the server", Duration.ofSeconds(10),
        () -> backendState(observer, pid).equals("idle in transaction (aborted)"));
    thread.get().interrupt();
    await("a cancel reached the idle backend", Duration.ofSeconds(10), () -> proxy.cancelsDone() >= 1);
    proxy.release();

    WaitResult r = waiter.get(30, TimeUnit.SECONDS);
    assertThat(r.thrown()).isNull();
    assertThat(granted.get()).isFalse();
    assertThat(r.interruptedAfter()).as("the interrupt stays set for the caller").isTrue();
    assertThat(r.lockTimeoutAfter()).isEqualTo(lockTimeout(holder));
    assertThat(advisoryLocksOf(observer, pid)).isZero();
    c.rollback();
    holder.rollback();
  }

  /**
   * On Java 21+, an interrupt of a virtual thread blocked in socket I/O closes the socket: the wait
   * runs on a platform thread, so the interrupt still ends it with InterruptedException and the
   * caller's connection and transaction survive.
   */
  @Test
  void lock_onAVirtualThread_interrupted_throwsInterrupted_andTheConnectionSurvives() throws Exception {
    assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21+");
    PgLocks locks = newLocks();
    Connection holder = transaction(connect());
    assertThat(locks.inTransaction(holder).tryLock("virtual")).isTrue();
    Connection c = transaction(connect());
    ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
        .invoke(null);
    track(virtual::shutdownNow);
    AtomicReference<Thread> thread = new AtomicReference<>();
    Future<WaitResult> waiter = virtual.submit(() -> {
      thread.set(Thread.currentThread());
      return waitAndProbe(c, () -> locks.inTransaction(c).lock("virtual", Duration.ofSeconds(30)));
    });
    await("the waiter blocks on the server", Duration.ofSeconds(10),
        () -> TransactionLocksTest.waitersFor(locks.key("virtual")) == 1);
    thread.get().interrupt();
    WaitResult r = waiter.get(30, TimeUnit.SECONDS);
    assertThat(r.thrown()).as("old code: LockSessionException, connection closed").isInstanceOf(InterruptedException.class);
    assertThat(r.interruptedAfter()).isFalse();
    assertThat(r.lockTimeoutAfter()).isEqualTo(lockTimeout(holder));
    assertThat(c.isClosed()).isFalse();
    c.rollback();
    holder.rollback();
  }

  /** A lock call. */
  interface Wait {
    void run() throws Exception;
  }

  /** Runs the wait on this thread, then a statement on the same connection (on a pooled thread). */
  private static WaitResult waitAndProbe(Connection c, Wait wait) throws SQLException {
    Throwable thrown = null;
    try {
      wait.run();
    } catch (Exception e) {
      thrown = e;
    }
    boolean interrupted = Thread.interrupted();
    return new WaitResult(thrown, interrupted, lockTimeout(c));
  }

  private HoldingProxy proxy(String marker, HoldingProxy.Hold hold) throws IOException {
    Matcher m = url();
    return new HoldingProxy(m.group(1), m.group(2) == null ? 5432 : Integer.parseInt(m.group(2)), marker, hold);
  }

  /** A connection to the test database through the proxy (not one the leak check knows: cleaned here). */
  private Connection connectThrough(HoldingProxy proxy) throws SQLException {
    Properties props = new Properties();
    if (db().user() != null) {
      props.setProperty("user", db().user());
    }
    if (db().password() != null) {
      props.setProperty("password", db().password());
    }
    props.setProperty("ApplicationName", "pglock-test-proxied");
    return track(DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + proxy.port() + "/" + url().group(3),
        props));
  }

  private static Matcher url() {
    Matcher m = URL.matcher(db().jdbcUrl());
    assertThat(m.matches()).as("a host:port JDBC URL: %s", db().jdbcUrl()).isTrue();
    return m;
  }

  private static Connection transaction(Connection c) throws SQLException {
    c.setAutoCommit(false);
    return c;
  }

  private static int backendPid(Connection c) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static String lockTimeout(Connection c) throws SQLException {
    return TransactionLocksTest.lockTimeout(c);
  }

  private static int advisoryLocksOf(Connection observer, int pid) throws SQLException {
    try (PreparedStatement ps = observer.prepareStatement(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = ?")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static String backendState(Connection observer, int pid) {
    try (PreparedStatement ps = observer.prepareStatement("SELECT state FROM pg_stat_activity WHERE pid = ?")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? String.valueOf(rs.getString(1)) : "gone";
      }
    } catch (SQLException e) {
      throw new RuntimeException(e);
    }
  }

  private static boolean idleInTransaction(Connection observer, int pid) {
    try (PreparedStatement ps = observer.prepareStatement("""
        SELECT s.state = 'idle in transaction' AND EXISTS (
                 SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.pid = s.pid AND l.granted)
          FROM pg_stat_activity s WHERE s.pid = ?""")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    } catch (SQLException e) {
      throw new RuntimeException(e);
    }
  }
}
