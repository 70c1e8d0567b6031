package io.pglock.internal;

import io.pglock.LockCapacityException;
import io.pglock.LockKey;
import io.pglock.LockMode;
import io.pglock.LossCause;
import io.pglock.PgLocksConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The local half of every session lock: which keys this process holds, in which mode, through
 * which handles, on which session, and who waits. See the package documentation for the rules.
 */
final class LockTable implements LockSession.Listener {
  /** A timeout meaning "do not wait": try once. */
  static final long NO_WAIT = 0;
  /** A timeout meaning "wait as long as it takes". */
  static final long FOREVER = Long.MAX_VALUE;


  private final PgLocksConfig config;
  private final Sessions sessions;
  private final Callbacks callbacks;
  /** The user's listener behind a guard; null when none was set. */
  private final io.pglock.PgLocksListener listener;
  private final Stripe[] stripes = new Stripe[64];
  private final AtomicInteger held = new AtomicInteger();
  private final ServerFetch fetch;
  private volatile int cap = 1;
  /** Set by {@link #closeAll()} under every stripe's monitor; read under a stripe's monitor. */
  private boolean closed;

  private static final class Stripe {
    final Map<ServerKey, KeyState> keys = new HashMap<>();
  }

  LockTable(PgLocksConfig config, Sessions sessions, Callbacks callbacks) {
    this.config = config;
    this.sessions = sessions;
    this.callbacks = callbacks;
    this.listener = GuardedListener.of(config.listener());
    this.fetch = new ServerFetch(this, config, sessions);
    for (int i = 0; i < stripes.length; i++) {
      stripes[i] = new Stripe();
    }
  }

  Callbacks callbacks() {
    return callbacks;
  }

  /** The user's listener behind a guard (it never throws), or null when none was set. */
  io.pglock.PgLocksListener listener() {
    return listener;
  }

  /** The namespace events are reported under. */
  String namespace() {
    return config.namespace();
  }

  int heldLocks() {
    return held.get();
  }

  /**
   * Gives the key of every named lock held here now to {@code into}, under each stripe's monitor in
   * turn (so {@code into} must be quick): the name recorder's view of what is held, read once a
   * second instead of noted at every grant.
   */
  void heldNames(java.util.function.Consumer<LockKey> into) {
    for (Stripe s : stripes) {
      synchronized (s) {
        for (KeyState st : s.keys.values()) {
          if (st.session != null && !st.handles().isEmpty()) {
            LockKey key = st.handles().get(0).key();
            if (key.space() == LockKey.KeySpace.NAME) {
              into.accept(key);
            }
          }
        }
      }
    }
  }

  private Stripe stripe(ServerKey key) {
    long h = key.value() * 0x9E3779B97F4A7C15L + key.objsubid();
    return stripes[(int) (h >>> 58)];
  }

  /**
   * Acquires a lock.
   *
   * @param timeoutNanos {@link #NO_WAIT}, {@link #FOREVER} or a wait bound
   * @param fenced whether the grant must come with a fencing token (exclusive only): such a lock
   *     always comes from the server, never by a local handoff
   * @return the handle, or null if the lock was not acquired in time
   * @throws InterruptedException if interruptible and interrupted (nothing is then held)
   */
  DefaultLockHandle acquire(LockKey lockKey, LockMode mode, long timeoutNanos, boolean interruptible, boolean fenced)
      throws InterruptedException {
    long start = System.nanoTime();
    long deadline = timeoutNanos == FOREVER ? Long.MAX_VALUE : start + timeoutNanos;
    ServerKey key = ServerKey.of(lockKey);
    Stripe s = stripe(key);
    KeyState st;
    KeyState.Waiter w = null;
    boolean askedServer = false;
    boolean writerWaits = false;
    while (true) {
      LockSession askOn = null;
      synchronized (s) {
        if (closed) {
          throw closedError();
        }
        st = s.keys.computeIfAbsent(key, KeyState::new);
        if (st.canJoin(mode) && !writerWaits) {
          if (st.handoffs < config.maxLocalHandoffs() || askedServer) {
            // A reader joins the shared lock held here. Past the cap it has asked the server first
            // whether a writer waits, as PostgreSQL would for a reader in another process.
            st.handoffs = askedServer ? 0 : st.handoffs + 1;
            return addHolder(st, lockKey, mode);
          }
          askOn = st.session;
        }
      }
      if (askOn == null) {
        break;
      }
      askedServer = true;
      writerWaits = fetch.writerWaiting(askOn, key);
    }
    synchronized (s) {
      if (closed) {
        throw closedError();
      }
      st = s.keys.computeIfAbsent(key, KeyState::new);
      if (st.canJoin(mode) && !writerWaits && (st.handoffs < config.maxLocalHandoffs() || askedServer)) {
        st.handoffs = askedServer ? 0 : st.handoffs + 1; // changed hands since the loop above looked
        return addHolder(st, lockKey, mode);
      }
      if (st.isFree()) {
        st.busy = true; // this thread fetches the lock from the server
      } else if (timeoutNanos == NO_WAIT && !(st.unlockPending && !st.hasWaiters())) {
        return null; // held or being fetched here: a try fails as if another process held it
      } else {
        w = new KeyState.Waiter(mode, lockKey, fenced);
        st.enqueue(w);
      }
    }
    if (w != null) {
      // A try that only waits for a pending unlock of our own gets a short, bounded wait.
      long waitUntil = timeoutNanos == NO_WAIT ? start + config.lease().toNanos() : deadline;
      Object outcome = awaitWaiter(s, st, w, waitUntil, interruptible);
      if (outcome != KeyState.Waiter.class) {
        return (DefaultLockHandle) outcome;
      }
    }
    return fetch.fetch(st, lockKey, mode, timeoutNanos, deadline, interruptible, fenced);
  }

  /**
   * @return the handle, null on timeout, or {@code Waiter.class} if made the representative
   * @throws InterruptedException if interruptible and interrupted before a handoff (nothing held)
   * @throws io.pglock.PgLocksClosedException if the PgLocks was closed meanwhile
   */
  private Object awaitWaiter(Stripe s, KeyState st, KeyState.Waiter w, long deadline, boolean interruptible)
      throws InterruptedException {
    boolean interrupted = false;
    boolean reported = false;
    List<KeyState.Waiter> granted = null;
    try {
      while (true) {
        synchronized (s) {
          if (w.outcome == KeyState.Waiter.GRANTED) {
            return w.handle; // a handoff won the race with any interrupt, which stays set
          }
          if (w.outcome == KeyState.Waiter.CLOSED) {
            throw closedError(); // an interrupt that raced the close stays set
          }
          if (w.outcome == KeyState.Waiter.REPRESENTATIVE) {
            if (interruptible && interrupted) {
              st.busy = false;
              passOn(s, st); // hand the role on before leaving
              reported = true;
              throw new InterruptedException("interrupted while waiting for " + st.key);
            }
            return KeyState.Waiter.class;
          }
          boolean timedOut = deadline != Long.MAX_VALUE && System.nanoTime() - deadline >= 0;
          if (timedOut || (interruptible && interrupted)) {
            st.removeWaiter(w);
            // Whoever queued behind the leaver may now be compatible with the holders: let them in.
            granted = grantSharedWaiters(st);
            removeIfFree(s, st);
            if (timedOut) {
              return null;
            }
            reported = true;
            throw new InterruptedException("interrupted while waiting for " + st.key);
          }
        }
        if (deadline == Long.MAX_VALUE) {
          LockSupport.park(this);
        } else {
          LockSupport.parkNanos(this, deadline - System.nanoTime());
        }
        interrupted |= Thread.interrupted();
      }
    } finally {
      wake(granted);
      if (interrupted && !reported) {
        Thread.currentThread().interrupt(); // never swallow an interrupt we do not report
      }
    }
  }

  io.pglock.PgLocksClosedException closedError() {
    return new io.pglock.PgLocksClosedException("the PgLocks (node " + config.nodeName()
        + ") was closed while this acquire waited");
  }

  /** Counts a server lock about to be taken against the cap. */
  void reserve(LockKey key) {
    int now = held.incrementAndGet();
    if (now > cap) {
      held.decrementAndGet();
      throw new LockCapacityException("cannot lock " + key + ": " + cap + " locks are held through this "
          + "PgLocks (node " + config.nodeName() + "), its cap" + (config.maxHeldLocks() == 0
              ? " (automatic: a quarter of the server's lock table)" : "")
          + "; release some, or raise PgLocksBuilder.maxHeldLocks if the server's lock table has room");
    }
  }

  /** Sets the cap in force; called once, before the instance is handed out. */
  void cap(int cap) {
    this.cap = cap;
  }

  int cap() {
    return cap;
  }

  /** Gives back a reservation whose lock was not taken. */
  void unreserve() {
    held.decrementAndGet();
  }

  /** The representative did not get the lock: the next waiter takes over, or the state goes. */
  void giveUp(KeyState st) {
    Stripe s = stripe(st.key);
    synchronized (s) {
      st.busy = false;
      passOn(s, st);
    }
  }

  /** Records a lock the server just granted on the session. */
  DefaultLockHandle grant(KeyState st, LockKey lockKey, LockMode mode, LockSession session, long token) {
    Stripe s = stripe(st.key);
    DefaultLockHandle h;
    List<KeyState.Waiter> joined = null;
    synchronized (s) {
      if (closed) {
        // closeAll ran while the grant was on its way: the session's close frees the server lock,
        // and the caller gives back its reservation
        throw closedError();
      }
      st.busy = false;
      st.session = session;
      st.serverMode = mode;
      st.handoffs = 0;
      session.held.add(st);
      h = addHolder(st, lockKey, mode, token);
      if (mode == LockMode.SHARED) {
        joined = grantSharedWaiters(st);
      }
    }
    wake(joined);
    if (session.isDead() && session.lossCause() != null) {
      // The session died while the grant was on its way: its loss broadcast may have missed us.
      // (While lossCause is still null, die() has yet to broadcast, and will see this key.)
      sessionLost(session, session.lossCause());
    }
    return h;
  }

  private DefaultLockHandle addHolder(KeyState st, LockKey lockKey, LockMode mode) {
    return addHolder(st, lockKey, mode, 0);
  }

  private DefaultLockHandle addHolder(KeyState st, LockKey lockKey, LockMode mode, long token) {
    DefaultLockHandle h = new DefaultLockHandle(this, st, st.session, lockKey, mode, token);
    st.addHandle(h);
    return h;
  }

  /**
   * Grants every shared waiter at the head of the queue while the lock is held shared here: they
   * share the server lock, as a reader in another process would. Joins count as no handoff.
   */
  private List<KeyState.Waiter> grantSharedWaiters(KeyState st) {
    if (st.serverMode != LockMode.SHARED || st.session == null || !st.session.leaseValid()) {
      return null;
    }
    List<KeyState.Waiter> granted = null;
    KeyState.Waiter next;
    while ((next = st.peekWaiter()) != null && next.mode == LockMode.SHARED) {
      st.pollWaiter();
      grantWaiter(st, next);
      if (granted == null) {
        granted = new ArrayList<>(2);
      }
      granted.add(next);
    }
    return granted;
  }

  private void grantWaiter(KeyState st, KeyState.Waiter w) {
    w.handle = addHolder(st, w.lockKey, w.mode);
    w.outcome = KeyState.Waiter.GRANTED;
  }

  private static void wake(List<KeyState.Waiter> waiters) {
    if (waiters != null) {
      for (KeyState.Waiter w : waiters) {
        LockSupport.unpark(w.thread);
      }
    }
  }

  /** Called by a handle that moved to RELEASED: hands the lock on locally or releases it. */
  void release(DefaultLockHandle h) {
    KeyState st = h.state;
    Stripe s = stripe(st.key);
    Op unlock = null;
    LockSession session;
    List<KeyState.Waiter> woken = null;
    synchronized (s) {
      if (!st.removeHandle(h) || st.holders() > 0) {
        return; // lost meanwhile (already cleaned up), or other shared holders remain
      }
      session = st.session;
      KeyState.Waiter head = st.peekWaiter();
      // A fenced waiter needs a token of its own, which only the server's grant carries.
      if (head != null && head.mode == st.serverMode && !head.fenced && st.handoffs < config.maxLocalHandoffs()
          && session != null && session.leaseValid()) {
        st.pollWaiter();
        st.handoffs++;
        grantWaiter(st, head);
        woken = new ArrayList<>(2);
        woken.add(head);
        List<KeyState.Waiter> more = grantSharedWaiters(st);
        if (more != null) {
          woken.addAll(more);
        }
      } else {
        LockMode mode = st.serverMode;
        session.held.remove(st);
        st.session = null;
        st.serverMode = null;
        st.handoffs = 0;
        boolean viaWaitSession = session.forWaiting;
        // Until the unlock is queued, nobody here may send a try for the key: it could overtake
        // the unlock on the same backend and stack on it. On a wait session, until it is answered.
        st.unlockPending = true;
        unlock = Op.unlock(st.key, mode, ok -> unlocked(s, st, session, viaWaitSession));
      }
    }
    wake(woken);
    if (unlock != null) {
      session.submit(unlock, false);
      if (!session.forWaiting) {
        synchronized (s) {
          st.unlockPending = false;
          passOn(s, st); // the next try queues behind the unlock on the same session
        }
      }
    }
  }

  /** Runs on the session when an unlock has been answered (or the session died with it queued). */
  private void unlocked(Stripe s, KeyState st, LockSession session, boolean viaWaitSession) {
    held.decrementAndGet();
    if (viaWaitSession) {
      sessions.returnWaitSession(session);
      synchronized (s) {
        st.unlockPending = false;
        passOn(s, st);
      }
    }
  }

  /** With no server lock here: makes the first waiter the representative, or drops a free state. */
  private void passOn(Stripe s, KeyState st) {
    if (st.busy || st.unlockPending || st.session != null) {
      return;
    }
    KeyState.Waiter head = st.pollWaiter();
    if (head != null) {
      st.busy = true;
      head.outcome = KeyState.Waiter.REPRESENTATIVE;
      LockSupport.unpark(head.thread);
    } else {
      removeIfFree(s, st);
    }
  }

  private static void removeIfFree(Stripe s, KeyState st) {
    if (st.isFree() && !st.hasWaiters()) {
      s.keys.remove(st.key, st);
    }
  }

  @Override
  public void sessionLost(LockSession session, LossCause cause) {
    for (KeyState st : List.copyOf(session.held)) {
      Stripe s = stripe(st.key);
      List<DefaultLockHandle> lost;
      synchronized (s) {
        if (st.session != session) {
          continue;
        }
        session.held.remove(st);
        lost = List.copyOf(st.handles());
        st.handles().clear();
        st.session = null;
        st.serverMode = null;
        st.handoffs = 0;
        held.decrementAndGet();
        passOn(s, st);
      }
      if (session.forWaiting) {
        sessions.returnWaitSession(session);
      }
      for (DefaultLockHandle h : lost) {
        h.markLost(cause, session.failure());
      }
    }
  }

  /**
   * Marks every held handle lost with {@link LossCause#CLOSED} and wakes every waiter with a
   * {@link io.pglock.PgLocksClosedException}; the sessions' close then frees the server locks.
   */
  void closeAll() {
    List<DefaultLockHandle> lost = new ArrayList<>();
    for (Stripe s : stripes) {
      synchronized (s) {
        closed = true;
        for (KeyState st : s.keys.values()) {
          lost.addAll(st.handles());
          st.handles().clear();
          if (st.session != null) {
            st.session.held.remove(st);
            st.session = null;
            held.decrementAndGet();
          }
          KeyState.Waiter w;
          while ((w = st.pollWaiter()) != null) {
            w.outcome = KeyState.Waiter.CLOSED;
            LockSupport.unpark(w.thread);
          }
        }
        s.keys.clear();
      }
    }
    for (DefaultLockHandle h : lost) {
      h.markLost(LossCause.CLOSED, "the PgLocks was closed");
    }
  }
}
