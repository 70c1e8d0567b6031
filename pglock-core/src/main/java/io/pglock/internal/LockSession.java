package io.pglock.internal;

import io.pglock.LockMode;
import io.pglock.LockSessionException;
import io.pglock.LossCause;
import io.pglock.PgLocksClosedException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection that holds session-level advisory locks for many handles, and the loop that talks
 * to it. See the package documentation for the batching, lease and failure rules.
 */
final class LockSession {
  private static final Logger log = LoggerFactory.getLogger(LockSession.class);
  private static final int MAX_BATCH = 1024;
  /**
   * How often a session that holds locks and sends nothing looks for a message from the server
   * (see {@link #probe()}): detection within this, at a cost of a few system calls per look.
   */
  static final long PROBE_NANOS = 40_000_000L;
  /**
   * A caller runs its batch itself only if the session answered within this window. The thread that
   * sends a statement is the one that waits for its answer, and a socket read cannot be abandoned:
   * after a quiet spell the network may have gone silent, so the batch goes through the loop and
   * the caller waits with its own bound. Under traffic, callers keep sending their own batches (no
   * thread handoff).
   */
  static final long COMBINE_WINDOW_NANOS = 50_000_000L;

  /** Told when a session stops carrying locks for a reason other than an orderly close. */
  interface Listener {
    void sessionLost(LockSession session, LossCause cause);
  }

  final String name;
  final boolean forWaiting;
  private final int pid;
  /** The backend's start, as the server tells it: with the pid, it names the backend for good. */
  final java.time.Instant backendStart;
  private final Lease lease;
  private final Listener listener;
  private final ScheduledExecutorService watchdog;
  private final ConcurrentLinkedQueue<Op> queue = new ConcurrentLinkedQueue<>();
  /** Held by whoever is talking to the connection: the loop thread or a combining caller. */
  private final ReentrantLock talk = new ReentrantLock();
  /** Keys whose server lock lives on this session, for loss broadcast. */
  final Set<KeyState> held = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean dead = new AtomicBoolean();
  private final Thread loop;
  /** Only the thread holding {@link #talk} uses it. */
  private final SessionStatements statements;
  private volatile boolean closing;
  /** The op running as a statement of its own (a wait), if any; only the talking thread writes it. */
  private volatile Op alone;
  /** The loop found the connection taken and parks until the taker lets go. */
  private volatile boolean wantsTalk;
  /** The loop sleeps until the heartbeat: a caller that gave the session a lock must wake it. */
  private volatile boolean longParked;
  /** When this session last sent a statement or looked for a server message (loop's own clock). */
  private volatile long lastActivity = System.nanoTime();
  /** When the last answer came back ({@link System#nanoTime()}). */
  private volatile long lastAnswer = System.nanoTime();
  private volatile LossCause lossCause;
  private volatile String failure;
  /**
   * Cancel requests sent and not yet known to have reached the server. A cancel travels on a
   * connection of its own and lands on whatever the backend runs when it arrives: the connection
   * goes back to a pool only once none is in flight.
   */
  private final java.util.concurrent.atomic.AtomicInteger cancelsInFlight =
      new java.util.concurrent.atomic.AtomicInteger();

  private LockSession(String name, boolean forWaiting, BorrowedConnection connection, int pid,
      java.time.Instant backendStart, Lease lease, Listener listener, ScheduledExecutorService watchdog, String schema)
      throws SQLException {
    this.backendStart = backendStart;
    this.name = name;
    this.forWaiting = forWaiting;
    this.pid = pid;
    this.lease = lease;
    this.listener = listener;
    this.watchdog = watchdog;
    this.statements = new SessionStatements(connection, schema);
    this.loop = new Thread(this::loop, name);
    this.loop.setDaemon(true);
  }

  /** Opens and starts a session on a connection already set up by {@link SessionSetup}. */
  static LockSession start(String name, boolean forWaiting, SessionSetup.Opened opened, Listener listener,
      ScheduledExecutorService watchdog, String schema) throws SQLException {
    LockSession s = new LockSession(name, forWaiting, opened.connection(), opened.pid(), opened.backendStart(),
        opened.lease(), listener, watchdog, schema);
    s.loop.start();
    s.scheduleLeaseCheck();
    return s;
  }

  int pid() {
    return pid;
  }

  boolean isDead() {
    return dead.get();
  }

  /** True while the session is alive and its lease has not run out (checked against the clock). */
  boolean leaseValid() {
    return !dead.get() && !lease.expired();
  }

  /** How long until the lease runs out, by the stricter clock (zero or less when it has). */
  long leaseRemainingNanos() {
    return lease.remainingNanos();
  }

  /** The lease deadline on the {@link System#nanoTime()} scale. */
  long leaseDeadline() {
    return lease.deadline();
  }

  /** Why the session died, for messages: "" while alive. */
  String failure() {
    String f = failure;
    return f == null ? "" : f;
  }

  LossCause lossCause() {
    return lossCause;
  }

  /**
   * Queues an op. A caller that will wait for the answer passes {@code combine}: if no one is talking
   * to the connection, it runs the batch itself (no thread handoff); otherwise the current talker
   * or the loop picks it up. Releases never combine, so that {@code close()} never blocks.
   */
  void submit(Op op, boolean combine) {
    if (dead.get() || (closing && op.isWait())) {
      reject(op);
      return;
    }
    queue.add(op);
    if (combine && !op.runsAlone() && System.nanoTime() - lastAnswer < COMBINE_WINDOW_NANOS && talk.tryLock()) {
      try {
        while (!op.isDone() && !dead.get() && runBatch()) {
          // keep combining until our own op is answered
        }
      } finally {
        releaseTalk();
      }
      if (!queue.isEmpty()) {
        LockSupport.unpark(loop);
      }
    } else {
      LockSupport.unpark(loop);
    }
    if (dead.get()) {
      failQueued(); // lost a race with the session's failure: nobody else will answer
    }
  }

  /**
   * Asks the server to abandon the statement in flight (a blocking wait). Best effort, and sent from
   * a short-lived thread of its own: a cancel opens a new connection, which over a partitioned
   * network waits out the driver's {@code cancelSignalTimeout}, and no caller may wait for that.
   */
  void cancelStatement() {
    cancelStatement(() -> { });
  }

  /**
   * Cancels the blocking wait in flight, if there is one; call after {@link #beginClose()}, which
   * keeps a new wait from starting. An idle session gets no cancel, which could otherwise reach the
   * next user of a pooled connection.
   */
  void cancelWaitInFlight() {
    if (alone != null) {
      cancelStatement();
    }
  }

  /** {@link #cancelStatement()}, then runs {@code afterwards} on the cancel's thread, sent or not. */
  void cancelStatement(Runnable afterwards) {
    cancelsInFlight.incrementAndGet();
    Thread sender = new Thread(() -> {
      try {
        statements.cancel();
      } catch (SQLException | RuntimeException e) {
        log.debug("{}: cancel request failed: {}", name, e.toString());
      } finally {
        cancelsInFlight.decrementAndGet();
        afterwards.run();
      }
    }, name + "-cancel");
    sender.setDaemon(true);
    sender.start();
  }

  private void loop() {
    while (!dead.get()) {
      if (queue.isEmpty()) {
        if (closing) {
          break;
        }
        long untilHeartbeat = lease.untilHeartbeat();
        if (untilHeartbeat > 0 && idle(untilHeartbeat)) {
          continue;
        }
      }
      wantsTalk = true;
      if (!talk.tryLock()) {
        // A caller is combining: it wakes this loop when it lets go (see wantsTalk). Fighting it for
        // the connection would turn its next batch into a thread handoff; spinning would burn a core
        // for as long as its statement is stalled.
        LockSupport.park(this);
        continue;
      }
      wantsTalk = false;
      try {
        if (!queue.isEmpty()) {
          runBatch();
        } else if (!closing && lease.untilHeartbeat() <= 0) {
          heartbeat();
        } else if (!closing && !held.isEmpty()) {
          probe();
        }
      } catch (RuntimeException | Error e) {
        log.error("{}: unexpected error in the session loop; closing the session", name, e);
        die(LossCause.CONNECTION_LOST, e.toString());
        Op interrupted = alone;
        if (interrupted != null) {
          interrupted.fail(deadError()); // answered, so that its waiter and its wait session move on
        }
      } finally {
        talk.unlock();
      }
    }
    failQueued();
  }

  /**
   * Parks the idle loop until the next thing it must do. While the session holds locks, that is the
   * next probe. While it holds none, a lock can still arrive without this loop (a caller that
   * combines), but only while the session answered within the combine window; so the loop wakes at
   * probe intervals until the session has been quiet for twice that window, then sleeps until the
   * heartbeat, flagged so that a caller who combines after all wakes it on leaving.
   *
   * @return true if it parked (the caller re-evaluates), false if a probe is due now
   */
  private boolean idle(long untilHeartbeat) {
    long now = System.nanoTime();
    if (!held.isEmpty()) {
      long untilProbe = PROBE_NANOS - (now - lastActivity);
      if (untilProbe <= 0) {
        return false;
      }
      LockSupport.parkNanos(this, Math.min(untilHeartbeat, untilProbe));
      return true;
    }
    long untilQuiet = 2 * COMBINE_WINDOW_NANOS - (now - lastAnswer);
    if (untilQuiet > 0) {
      LockSupport.parkNanos(this, Math.min(untilHeartbeat, Math.max(untilQuiet, PROBE_NANOS)));
      return true;
    }
    longParked = true;
    if (held.isEmpty() && queue.isEmpty()) { // looked at after the flag: a combiner sees one or the other
      LockSupport.parkNanos(this, untilHeartbeat);
    }
    longParked = false;
    return true;
  }

  /** Lets go of the connection after combining, waking the loop if it waits for it or sleeps long. */
  private void releaseTalk() {
    talk.unlock();
    if (wantsTalk || longParked) {
      LockSupport.unpark(loop);
    }
  }

  /**
   * Looks, without sending anything, whether the server has said something on this idle connection:
   * an administrator's {@code pg_terminate_backend}, a shutdown or a crash makes the backend send a
   * FATAL error before it closes the socket. Reading it takes a millisecond of socket timeout and no
   * round trip, so a session that holds locks learns of the loss within {@link #PROBE_NANOS} instead
   * of at its next heartbeat. Must hold {@link #talk}.
   */
  private void probe() {
    lastActivity = System.nanoTime();
    try {
      statements.probe();
    } catch (SQLException e) {
      die(causeOf(e), SqlErrors.describe(e));
    }
  }

  /** Sends what is queued. Must hold {@link #talk}. @return false if nothing could be sent */
  private boolean runBatch() {
    Op first = queue.peek();
    if (first == null || dead.get()) {
      return false;
    }
    if (first.runsAlone()) {
      Op op = queue.poll();
      alone = op;
      try {
        if (op.isWait()) {
          runWait(op);
        } else {
          runWriterWaiting(op);
        }
      } finally {
        alone = null;
      }
      return true;
    }
    List<Op> ops = new ArrayList<>(Math.min(queue.size(), MAX_BATCH));
    while (ops.size() < MAX_BATCH) {
      Op next = queue.peek();
      if (next == null || next.runsAlone()) {
        break;
      }
      ops.add(queue.poll());
    }
    return execute(ops);
  }

  /** Runs try-locks and unlocks as one statement, in order. Must hold {@link #talk}. */
  private boolean execute(List<Op> ops) {
    int n = ops.size();
    long[] results;
    long sent = lease.now();
    long sentWall = lease.nowWall();
    lastActivity = sent;
    try {
      results = statements.run(ops);
    } catch (SQLException | RuntimeException thrown) {
      // A failed batch may have taken some of its locks (session locks ignore the statement's
      // failure), so the session's state is unknown: close it, which frees everything it held.
      SQLException e = thrown instanceof SQLException ? (SQLException) thrown
          : new SQLException("unexpected error in the driver: " + thrown, thrown);
      die(causeOf(e), SqlErrors.describe(e));
      RuntimeException error = SqlErrors.state(e).equals(SqlErrors.OUT_OF_SHARED_MEMORY)
          ? new io.pglock.LockCapacityException("the server's lock table is full (" + SqlErrors.describe(e)
              + "); raise max_locks_per_transaction or hold fewer locks", e)
          : new LockSessionException(name + " failed: " + SqlErrors.describe(e), e);
      for (Op op : ops) {
        if (op.isUnlock()) {
          op.complete(false);
        } else {
          op.fail(error);
        }
      }
      return false;
    }
    if (!renewed(sent, sentWall)) {
      ops.forEach(this::reject); // the session is closed: what this batch took is freed with it
      return false;
    }
    for (int i = 0; i < n; i++) {
      Op op = ops.get(i);
      boolean ok = results[i] != 0;
      if (op.isUnlock() && !ok) {
        log.error("{}: the server did not hold {} {} when pglock released it; this is a pglock bug",
            name, op.shared() ? "shared" : "exclusive", op.key);
      }
      boolean taken;
      try {
        taken = op.fenced ? op.completeFenced(results[i]) : op.complete(ok);
      } catch (RuntimeException | Error e) {
        // an unlock's bookkeeping failed: log it, and still answer every other op of the batch
        log.error("{}: completing {} failed", name, op.key, e);
        continue;
      }
      if (!taken && ok) {
        execute(List.of(Op.unlock(op.key, op.shared() ? LockMode.SHARED : LockMode.EXCLUSIVE, null)));
      }
    }
    return true;
  }

  /**
   * Renews the lease with a statement sent at {@code sent} whose answer came back, unless the lease
   * had already run out: expiry is one-way, since the handles may already have been told.
   */
  private boolean renewed(long sent, long sentWall) {
    if (leaseExpired()) {
      die(LossCause.LEASE_EXPIRED, "an answer came back after the lease had run out (" + lease + ")");
      return false;
    }
    lease.succeeded(sent, sentWall);
    lastAnswer = System.nanoTime();
    return true;
  }

  private boolean leaseExpired() {
    return lease.expired();
  }

  /**
   * The loss cause of a failed statement: the server's idle-session timeout (57P05), or any failure
   * met after the lease deadline, is the lease running out.
   */
  private LossCause causeOf(SQLException e) {
    return leaseExpired() || "57P05".equals(SqlErrors.state(e)) ? LossCause.LEASE_EXPIRED : LossCause.CONNECTION_LOST;
  }

  /** Runs a blocking wait; the wait session holds no other lock while it waits. Must hold {@link #talk}. */
  private void runWait(Op op) {
    if (op.isDone()) {
      op.settle(); // abandoned before it was sent
      return;
    }
    if (closing) {
      op.fail(deadError()); // PgLocks.close(): no new server wait
      return;
    }
    long sent = lease.now();
    long sentWall = lease.nowWall();
    lastActivity = sent;
    try {
      statements.setLockTimeout(op.waitMillis);
      if (!renewed(sent, sentWall)) {
        op.fail(deadError());
        return;
      }
      sent = lease.now();
      sentWall = lease.nowWall();
      long token = statements.waitLock(op.key, op.shared(), op.fenced);
      lastActivity = lease.now();
      if (!renewed(sent, sentWall)) {
        op.fail(deadError());
      } else if (!(op.fenced ? op.completeFenced(token) : op.complete(true))) {
        unlockNow(op);
      }
    } catch (SQLException e) {
      String state = SqlErrors.state(e);
      if (state.equals(SqlErrors.LOCK_NOT_AVAILABLE) || state.equals(SqlErrors.QUERY_CANCELED)) {
        // The wait ended, but the lock may have been granted just before: look before reporting.
        boolean holds = holdsQuietly(op);
        if (dead.get() || !renewed(sent, sentWall)) {
          op.fail(deadError());
        } else if (holds && op.fenced) {
          // granted at the last moment, but the statement ended before the token was taken: a
          // fenced lock is never handed out without one, so give it back (the waiter tries again)
          unlockNow(op);
          op.complete(false);
        } else if (!op.complete(holds) && holds) {
          unlockNow(op);
        }
      } else if (state.equals(SqlErrors.DEADLOCK)) {
        if (op.fenced && holdsQuietly(op) && !dead.get()) {
          unlockNow(op); // the advisory lock came, the token did not: a fenced lock is never kept without one
        }
        op.fail(new io.pglock.LockDeadlockException("PostgreSQL broke a deadlock by refusing " + op.key
            + " (" + SqlErrors.describe(e) + ")", e));
      } else {
        die(causeOf(e), SqlErrors.describe(e));
        op.fail(new LockSessionException(name + " failed while waiting: " + SqlErrors.describe(e), e));
      }
    }
  }

  /** Answers whether an exclusive request for the op's key waits on the server. Must hold {@link #talk}. */
  private void runWriterWaiting(Op op) {
    if (op.isDone()) {
      op.settle();
      return;
    }
    long sent = lease.now();
    long sentWall = lease.nowWall();
    lastActivity = sent;
    try {
      boolean waiting = statements.exclusiveWaiting(op.key);
      if (renewed(sent, sentWall)) {
        op.complete(waiting);
      } else {
        op.fail(deadError());
      }
    } catch (SQLException e) {
      die(causeOf(e), SqlErrors.describe(e));
      op.fail(new LockSessionException(name + " failed: " + SqlErrors.describe(e), e));
    }
  }

  private boolean holdsQuietly(Op op) {
    try {
      return statements.holds(op.key, op.shared());
    } catch (SQLException e) {
      die(causeOf(e), SqlErrors.describe(e));
      return false; // the session is closed, so whatever it held is free
    }
  }

  /** Releases a lock whose waiter gave up, before anything else runs on this wait session. */
  private void unlockNow(Op op) {
    execute(List.of(Op.unlock(op.key, op.shared() ? LockMode.SHARED : LockMode.EXCLUSIVE, null)));
  }

  private void heartbeat() {
    if (leaseExpired()) {
      die(LossCause.LEASE_EXPIRED, "no round trip succeeded within the lease (" + lease + ")");
      return;
    }
    long sent = lease.now();
    long sentWall = lease.nowWall();
    lastActivity = sent;
    try {
      int now = statements.backendPid();
      if (now != pid) {
        log.error("{}: the backend changed from pid {} to {}: a pooler in transaction mode sits between "
            + "pglock and PostgreSQL, and session locks are not safe through it; connect lock sessions "
            + "directly or use transaction-scoped locks", name, pid, now);
        die(LossCause.CONNECTION_LOST, "backend pid changed from " + pid + " to " + now);
        return;
      }
      renewed(sent, sentWall);
    } catch (SQLException e) {
      die(causeOf(e), SqlErrors.describe(e));
    }
  }

  private void scheduleLeaseCheck() {
    long delay = lease.remainingNanos();
    try {
      watchdog.schedule(this::checkLease, Math.max(delay, 0), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // the PgLocks is closing; close() ends the session
    }
  }

  /** Runs on the watchdog at the lease deadline: expires the session unless a round trip renewed it. */
  private void checkLease() {
    if (dead.get()) {
      return;
    }
    if (leaseExpired()) {
      die(LossCause.LEASE_EXPIRED, "no round trip succeeded within the lease (" + lease + ")");
    } else {
      scheduleLeaseCheck();
    }
  }

  /**
   * Ends the session at once: marks it dead, aborts the connection (the server frees every lock on
   * it), fails queued ops and tells the listener. Idempotent.
   */
  void die(LossCause cause, String why) {
    if (!dead.compareAndSet(false, true)) {
      return;
    }
    dieClaimed(cause, why);
  }

  /** {@link #die} once this thread has set {@link #dead}: nobody else touches the connection now. */
  private void dieClaimed(LossCause cause, String why) {
    if (cause == LossCause.CONNECTION_LOST && leaseExpired()) {
      cause = LossCause.LEASE_EXPIRED; // the lease ran out first, whoever noticed the failure
    }
    lossCause = cause;
    failure = why;
    if (!closing) {
      log.warn("{} (backend pid {}) lost: {}", name, pid, why);
    }
    statements.abort();
    LockSupport.unpark(loop);
    failQueued();
    listener.sessionLost(this, cause);
  }

  private void failQueued() {
    Op op;
    while ((op = queue.poll()) != null) {
      reject(op);
    }
  }

  private void reject(Op op) {
    if (op.isUnlock()) {
      op.complete(false); // the server freed the lock with the session
    } else {
      op.fail(deadError());
    }
  }

  private RuntimeException deadError() {
    if (closing) {
      return new PgLocksClosedException("the PgLocks was closed");
    }
    return new LockSessionException(name + " (backend pid " + pid + ") is closed: " + failure(), null);
  }

  /** Refuses new server waits from now on and wakes the loop to send what is queued (close() follows). */
  void beginClose() {
    closing = true;
    LockSupport.unpark(loop);
  }

  /**
   * Orderly close by the deadline ({@link System#nanoTime()} scale): sends queued releases, frees
   * anything left with {@code pg_advisory_unlock_all()} and closes the connection. A session still
   * talking at the deadline, or whose network does not answer by then, is aborted instead: the
   * server frees its locks either way.
   */
  void close(long deadlineNanos) {
    beginClose();
    boolean interrupted = false;
    long left;
    while (loop.isAlive() && (left = deadlineNanos - System.nanoTime()) > 0) {
      try {
        loop.join(Math.max(1, left / 1_000_000));
      } catch (InterruptedException e) {
        interrupted = true; // close() finishes its bounded work; the interrupt stays set
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (dead.get()) {
      return;
    }
    long leftMillis = (deadlineNanos - System.nanoTime()) / 1_000_000;
    if (leftMillis <= 0 || !tryTalkWithin(leftMillis)) {
      die(LossCause.CLOSED, "closed while a statement was still running");
      return;
    }
    try {
      if (!cancelsDeliveredBy(deadlineNanos)) {
        // a cancel still on its way could stop the statement of whoever borrows the connection next
        die(LossCause.CLOSED, "closed while a cancel request was still on its way");
        return;
      }
      // From here on this thread owns the connection: a lease check that fires meanwhile must not
      // abort a connection that is being, or has been, given back to a pool.
      if (!dead.compareAndSet(false, true)) {
        return;
      }
      try {
        long leftNow = Math.max(1, (deadlineNanos - System.nanoTime()) / 1_000_000);
        statements.boundNetwork((int) Math.min(Integer.MAX_VALUE, leftNow));
        statements.unlockAllAndGiveBack();
        failQueued(); // an op that slipped in while closing must not wait forever
      } catch (SQLException | RuntimeException e) {
        dieClaimed(LossCause.CLOSED, e.toString());
      }
    } finally {
      talk.unlock();
    }
  }

  /** Waits, at most until the deadline, for every cancel request sent to reach the server. */
  private boolean cancelsDeliveredBy(long deadlineNanos) {
    while (cancelsInFlight.get() > 0) {
      if (deadlineNanos - System.nanoTime() <= 0) {
        return false;
      }
      LockSupport.parkNanos(this, 1_000_000L); // a cancel takes a connect and a round trip
    }
    return true;
  }

  /** Takes the connection from a caller that is still combining, waiting at most the given time. */
  private boolean tryTalkWithin(long millis) {
    try {
      return talk.tryLock(millis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // close() stays bounded; the caller keeps its interrupt
      return talk.tryLock();
    }
  }

  @Override
  public String toString() {
    return name + "(pid " + pid + (dead.get() ? ", dead: " + failure() : "") + ")";
  }
}
