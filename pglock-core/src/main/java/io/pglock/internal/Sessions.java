package io.pglock.internal;

import io.pglock.LockSessionException;
import io.pglock.PgLocksClosedException;
import io.pglock.PgLocksConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The connections of one {@code PgLocks}: a fixed number of lock sessions, each key always on the
 * same one (so that a release and the next try of a key are ordered on one queue), reopened when one
 * dies; and a bounded pool of wait sessions, opened when first needed.
 *
 * <p><b>No network I/O under a shared lock.</b> A session is opened on a thread of its own; callers
 * wait for it only as long as their own deadline allows, and a server that does not answer holds up
 * nobody else: not {@link #closeAll}, not an acquire on another session. The monitor of this object
 * guards only the bookkeeping.
 */
final class Sessions {
  private final PgLocksConfig config;
  private final ScheduledExecutorService watchdog;
  private final Slot[] lockSessions;
  private final Semaphore waitPermits;
  private final ConcurrentLinkedDeque<LockSession> idleWaitSessions = new ConcurrentLinkedDeque<>();
  private final ConcurrentLinkedDeque<LockSession> allWaitSessions = new ConcurrentLinkedDeque<>();
  private final AtomicInteger opened = new AtomicInteger();
  /**
   * Opens given up on that have not ended. A driver without a login timeout can wait forever for a
   * server that accepted the connection and went silent; such an open is left behind (it closes its
   * session if it ever ends) and a new one started, at most this many times at once.
   */
  static final int MAX_ABANDONED_OPENS = 4;
  private final AtomicInteger abandonedOpens = new AtomicInteger();
  private final LeaseClock clock;
  private LockSession.Listener listener;
  private volatile boolean closed;

  /** The place of one lock session: the live session, or the open under way. */
  private static final class Slot {
    final int index;
    volatile LockSession session;
    /** Guarded by the {@code Sessions} monitor. */
    CompletableFuture<LockSession> opening;
    /** When {@link #opening} started ({@link System#nanoTime()}); guarded by the monitor. */
    long openingSince;

    Slot(int index) {
      this.index = index;
    }
  }

  Sessions(PgLocksConfig config, ScheduledExecutorService watchdog, LeaseClock clock) {
    this.config = config;
    this.clock = clock;
    this.watchdog = watchdog;
    this.lockSessions = new Slot[config.lockSessions()];
    for (int i = 0; i < lockSessions.length; i++) {
      lockSessions[i] = new Slot(i);
    }
    this.waitPermits = new Semaphore(config.waitSessions());
  }

  void listener(LockSession.Listener listener) {
    this.listener = listener;
  }

  /**
   * The live lock session that carries this key. If it must be (re)opened, waits for the open at
   * most {@link PgLocksConfig#connectTimeout()} and not past {@code waitUntil} ({@link System#nanoTime()}
   * scale); the open goes on in the background if it takes longer.
   *
   * @throws LockSessionException if no session could be had in time
   */
  LockSession lockSessionFor(ServerKey key, long waitUntil) {
    ensureOpen();
    Slot slot = lockSessions[indexOf(key, lockSessions.length)];
    LockSession s = slot.session;
    if (s != null && !s.isDead()) {
      return s;
    }
    CompletableFuture<LockSession> f;
    synchronized (this) {
      ensureOpen();
      s = slot.session;
      if (s != null && !s.isDead()) {
        return s;
      }
      f = slot.opening;
      if (f != null && System.nanoTime() - slot.openingSince > config.connectTimeout().toNanos()
          && abandonedOpens.get() < MAX_ABANDONED_OPENS) {
        abandonedOpens.incrementAndGet(); // hung past its bound: start afresh, the network may have healed
        f.whenComplete((late, error) -> abandonedOpens.decrementAndGet());
        f = null;
      }
      if (f == null) {
        f = openInBackground("lock-" + slot.index, false);
        slot.opening = f;
        slot.openingSince = System.nanoTime();
        CompletableFuture<LockSession> mine = f;
        f.whenComplete((opened, error) -> settleLockSession(slot, mine, opened));
      }
    }
    return await(f, "lock session lock-" + slot.index, waitUntil);
  }

  /** Which of {@code count} lock sessions carries the key: always the same one. */
  static int indexOf(ServerKey key, int count) {
    long h = key.value() * 0x9E3779B97F4A7C15L + key.objsubid();
    return (int) ((h >>> 33) % count);
  }

  private void settleLockSession(Slot slot, CompletableFuture<LockSession> f, LockSession opened) {
    boolean keep;
    synchronized (this) {
      if (slot.opening == f) {
        slot.opening = null;
      }
      // a late open that was given up on is kept only if nothing took its place
      keep = opened != null && !closed && (slot.session == null || slot.session.isDead());
      if (keep) {
        slot.session = opened;
      }
    }
    if (opened != null && !keep) {
      opened.close(System.nanoTime() + config.connectTimeout().toNanos()); // the PgLocks closed meanwhile
    }
  }

  /**
   * Opens the first lock session and probes the server once: no transaction-mode pooler may be in
   * the way.
   *
   * @return the size of the server's lock table, and whether fencing is installed
   */
  SessionSetup.Probe openFirst() {
    LockSession first = lockSessionFor(new ServerKey(1, 0), Long.MAX_VALUE);
    // bounded like the open: a pool with no connection to spare must not hold build() for its own timeout
    return await(inBackground("probe", () -> SessionSetup.probe(config, first.pid())),
        "a second connection to probe the server", Long.MAX_VALUE);
  }

  /**
   * A wait session for one blocking wait, or null if the bound is reached. Waits for a new one to
   * open at most {@link PgLocksConfig#connectTimeout()}; one that opens later joins the idle pool.
   *
   * @throws LockSessionException if a new wait session could not be opened in time
   */
  LockSession borrowWaitSession(long waitUntil) {
    ensureOpen();
    if (!waitPermits.tryAcquire()) {
      return null;
    }
    boolean permitHandedOn = false;
    try {
      LockSession s;
      while ((s = idleWaitSessions.pollFirst()) != null) {
        if (!s.isDead()) {
          permitHandedOn = true;
          return s;
        }
        allWaitSessions.remove(s);
      }
      CompletableFuture<LockSession> registered = openInBackground("wait-" + opened.get(), true)
          .thenApply(this::registerWaitSession);
      try {
        LockSession opened = await(registered, "a wait session", waitUntil);
        permitHandedOn = true;
        return opened;
      } catch (LockSessionException e) {
        // Given up on: the open keeps the permit until it ends, so that no more than waitSessions
        // opens are ever under way; if it succeeds after all, the session waits in the pool.
        permitHandedOn = true;
        registered.whenComplete((late, error) -> {
          if (late != null) {
            idleWaitSessions.addFirst(late);
          }
          waitPermits.release();
        });
        throw e;
      }
    } finally {
      if (!permitHandedOn) {
        waitPermits.release();
      }
    }
  }

  /** Adds a newly opened wait session to the ones closeAll closes; closes it if closeAll already ran. */
  private LockSession registerWaitSession(LockSession s) {
    synchronized (this) {
      if (!closed) {
        allWaitSessions.add(s);
        return s;
      }
    }
    s.close(System.nanoTime() + config.connectTimeout().toNanos());
    return null;
  }

  /** Gives back a wait session that no longer holds or waits for anything. */
  void returnWaitSession(LockSession s) {
    if (s.isDead() || closed) {
      allWaitSessions.remove(s);
    } else {
      idleWaitSessions.addFirst(s);
    }
    waitPermits.release();
  }

  /** Starts opening a session on a thread of its own. */
  private CompletableFuture<LockSession> openInBackground(String role, boolean forWaiting) {
    int n = opened.incrementAndGet();
    return inBackground("open-" + role + "#" + n, () -> open(role, n, forWaiting));
  }

  /** Runs connection work on a thread of its own, so that callers can bound their wait for it. */
  private <T> CompletableFuture<T> inBackground(String threadRole, java.util.function.Supplier<T> work) {
    CompletableFuture<T> f = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        f.complete(work.get());
      } catch (RuntimeException | Error e) {
        f.completeExceptionally(e);
      }
    }, "pglock-" + config.nodeName() + "-" + threadRole);
    t.setDaemon(true);
    t.start();
    return f;
  }

  /**
   * For an instance with transaction locks alone: checks on one connection that the DataSource
   * reaches PostgreSQL 14 or newer, within the connect timeout.
   *
   * @return whether the schema records lock names
   */
  boolean checkDatabase() {
    return await(inBackground("check", () -> SessionSetup.checkOnly(config)), "a connection to check the database",
        Long.MAX_VALUE);
  }

  private LockSession open(String role, int n, boolean forWaiting) {
    SessionSetup.Opened o = SessionSetup.open(config, ApplicationNames.of(config, role));
    if (clock != LeaseClock.SYSTEM) {
      o = new SessionSetup.Opened(o.connection(), o.pid(), o.backendStart(), o.lease().withClock(clock));
    }
    try {
      return LockSession.start("pglock-" + config.nodeName() + "-" + role + "#" + n, forWaiting, o, listener,
          watchdog, config.schema());
    } catch (java.sql.SQLException e) {
      o.connection().discard();
      throw new LockSessionException("could not prepare a lock session: " + SqlErrors.describe(e), e);
    }
  }

  /**
   * Waits for an open at most the connect timeout. An interrupt does not cut the wait short (it is
   * bounded) and stays set for the caller to act on.
   */
  private <T> T await(CompletableFuture<T> f, String what, long waitUntil) {
    long deadline = System.nanoTime() + config.connectTimeout().toNanos();
    if (waitUntil - deadline < 0) {
      deadline = waitUntil;
    }
    boolean interrupted = false;
    try {
      while (true) {
        try {
          T s = f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
          if (s == null) {
            throw closedError();
          }
          return s;
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (TimeoutException e) {
          throw new LockSessionException("could not open " + what + " within the connect timeout ("
              + config.connectTimeout().toMillis() + " ms): the database or the network does not answer, or "
              + "a pooling DataSource has no connection to spare; the open goes on in the background. Check "
              + "that PostgreSQL is reachable and that the pool has a connection for each lock and wait "
              + "session, or raise PgLocksBuilder.connectTimeout", null);
        } catch (ExecutionException e) {
          Throwable cause = e.getCause();
          if (cause instanceof RuntimeException) {
            throw (RuntimeException) cause;
          }
          throw new LockSessionException("could not open " + what + ": " + cause, cause);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Lock and wait sessions open now. */
  int openCount() {
    int n = 0;
    for (Slot slot : lockSessions) {
      LockSession s = slot.session;
      if (s != null && !s.isDead()) {
        n++;
      }
    }
    for (LockSession s : allWaitSessions) {
      if (!s.isDead()) {
        n++;
      }
    }
    return n;
  }

  /** The smallest lease time left over the open lock sessions, or empty when none is open. */
  java.util.Optional<java.time.Duration> leaseMargin() {
    long least = Long.MAX_VALUE;
    for (Slot slot : lockSessions) {
      LockSession s = slot.session;
      if (s != null && !s.isDead()) {
        least = Math.min(least, s.leaseRemainingNanos());
      }
    }
    return least == Long.MAX_VALUE ? java.util.Optional.empty()
        : java.util.Optional.of(java.time.Duration.ofNanos(Math.max(0, least)));
  }

  private void ensureOpen() {
    if (closed) {
      throw closedError();
    }
  }

  private static PgLocksClosedException closedError() {
    return new PgLocksClosedException("the PgLocks was closed while this call was under way");
  }

  /**
   * Closes every session (orderly: queued releases first, then {@code pg_advisory_unlock_all()}) by
   * the deadline; a session that cannot finish by then is aborted, which frees its locks as well.
   * Opens still under way close their session when they finish.
   */
  void closeAll(long deadlineNanos) {
    List<LockSession> all = new ArrayList<>();
    synchronized (this) {
      closed = true;
      for (Slot slot : lockSessions) {
        if (slot.session != null) {
          all.add(slot.session);
        }
      }
      all.addAll(allWaitSessions);
    }
    for (LockSession s : allWaitSessions) {
      s.beginClose(); // the cancelled waiter must not queue its next chunk here
      s.cancelWaitInFlight();
    }
    for (LockSession s : all) {
      s.beginClose();
    }
    for (LockSession s : all) {
      s.close(deadlineNanos);
    }
  }
}
