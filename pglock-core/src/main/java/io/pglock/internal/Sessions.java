package io.pglock.internal;

import io.pglock.PgLocksConfig;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The connections of one {@code PgLocks}: a fixed number of lock sessions, each key always on the
 * same one (so that a release and the next try of a key are ordered on one queue), reopened when one
 * dies; and a bounded pool of wait sessions, opened when first needed.
 */
final class Sessions {
  private final PgLocksConfig config;
  private final ScheduledExecutorService watchdog;
  private final LockSession[] lockSessions;
  private final Semaphore waitPermits;
  private final ConcurrentLinkedDeque<LockSession> idleWaitSessions = new ConcurrentLinkedDeque<>();
  private final ConcurrentLinkedDeque<LockSession> allWaitSessions = new ConcurrentLinkedDeque<>();
  private final AtomicInteger opened = new AtomicInteger();
  private LockSession.Listener listener;
  private volatile boolean closed;

  Sessions(PgLocksConfig config, ScheduledExecutorService watchdog) {
    this.config = config;
    this.watchdog = watchdog;
    this.lockSessions = new LockSession[config.lockSessions()];
    this.waitPermits = new Semaphore(config.waitSessions());
  }

  void listener(LockSession.Listener listener) {
    this.listener = listener;
  }

  /** The live lock session that carries this key, opened or reopened on this thread if need be. */
  LockSession lockSessionFor(ServerKey key) {
    ensureOpen();
    long h = key.value() * 0x9E3779B97F4A7C15L + key.objsubid();
    int i = (int) ((h >>> 33) % lockSessions.length);
    LockSession s = lockSessions[i];
    if (s != null && !s.isDead()) {
      return s;
    }
    synchronized (this) {
      ensureOpen();
      s = lockSessions[i];
      if (s == null || s.isDead()) {
        s = open("lock-" + i, false);
        lockSessions[i] = s;
      }
      return s;
    }
  }

  /**
   * Opens the first lock session and probes the server once: no transaction-mode pooler may be in
   * the way.
   *
   * @return the size of the server's lock table
   */
  int openFirst() {
    LockSession first = lockSessionFor(new ServerKey(1, 0));
    return SessionSetup.probe(config, first.pid());
  }

  /** A wait session for one blocking wait, or null if the bound is reached. */
  LockSession borrowWaitSession() {
    ensureOpen();
    if (!waitPermits.tryAcquire()) {
      return null;
    }
    try {
      LockSession s;
      while ((s = idleWaitSessions.pollFirst()) != null) {
        if (!s.isDead()) {
          return s;
        }
        allWaitSessions.remove(s);
      }
      synchronized (this) {
        ensureOpen(); // closeAll must see every wait session it has to close
        s = open("wait-" + opened.get(), true);
        allWaitSessions.add(s);
      }
      return s;
    } catch (RuntimeException e) {
      waitPermits.release();
      throw e;
    }
  }

  /** Gives back a wait session that no longer holds or waits for anything. */
  void returnWaitSession(LockSession s) {
    if (s.isDead()) {
      allWaitSessions.remove(s);
    } else {
      idleWaitSessions.addFirst(s);
    }
    waitPermits.release();
  }

  private LockSession open(String role, boolean forWaiting) {
    int n = opened.incrementAndGet();
    String appName = "pglock:" + config.nodeName() + ":" + role;
    SessionSetup.Opened o = SessionSetup.open(config, appName);
    try {
      return LockSession.start("pglock-" + config.nodeName() + "-" + role + "#" + n, forWaiting, o, listener,
          watchdog);
    } catch (java.sql.SQLException e) {
      SessionSetup.closeQuietly(o.connection());
      throw new io.pglock.LockSessionException("could not prepare a lock session: " + SqlErrors.describe(e), e);
    }
  }

  /** Lock and wait sessions open now. */
  int openCount() {
    int n = 0;
    for (LockSession s : lockSessions) {
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

  private void ensureOpen() {
    if (closed) {
      throw new io.pglock.PgLocksClosedException("the PgLocks was closed while this call was under way");
    }
  }

  /** Closes every session (orderly: queued releases first, then {@code pg_advisory_unlock_all()}). */
  void closeAll(long timeoutMillis) {
    closed = true;
    for (LockSession s : allWaitSessions) {
      s.beginClose(); // the cancelled waiter must not queue its next chunk here
      s.cancelStatement();
    }
    synchronized (this) {
      for (LockSession s : lockSessions) {
        if (s != null) {
          s.close(timeoutMillis);
        }
      }
    }
    for (LockSession s : allWaitSessions) {
      s.close(timeoutMillis);
    }
  }
}
