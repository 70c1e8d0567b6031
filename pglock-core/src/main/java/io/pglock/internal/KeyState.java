package io.pglock.internal;

import io.pglock.LockMode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The local state of one server lock: who holds it here, on which session the server lock lives,
 * and who waits. Guarded by the monitor of its {@link LockTable} stripe, except {@link #session},
 * which handles read without the monitor for their lease check.
 */
final class KeyState {
  final ServerKey key;
  /** Where the server lock lives; null when this process does not hold it on the server. */
  volatile LockSession session;
  LockMode serverMode;
  /** A representative waiter is getting the lock from the server. */
  boolean busy;
  /** An unlock on a wait session has not completed: the next acquire must wait for it. */
  boolean unlockPending;
  /**
   * Local handoffs (a lock passed from one holder to the next) and shared joins since the lock last
   * came from the server or the server was last asked whether a writer waits.
   */
  int handoffs;
  private final List<DefaultLockHandle> handles = new ArrayList<>(1);
  private ArrayDeque<Waiter> waiters;

  KeyState(ServerKey key) {
    this.key = key;
  }

  /** A thread waiting for the lock in this process. */
  static final class Waiter {
    static final int WAITING = 0;
    static final int GRANTED = 1;
    static final int REPRESENTATIVE = 2;
    static final int CLOSED = 3;

    final LockMode mode;
    final io.pglock.LockKey lockKey;
    /** Wants a fencing token: takes the lock from the server only, never by a local handoff. */
    final boolean fenced;
    final Thread thread = Thread.currentThread();
    int outcome = WAITING;
    DefaultLockHandle handle;

    Waiter(LockMode mode, io.pglock.LockKey lockKey, boolean fenced) {
      this.mode = mode;
      this.lockKey = lockKey;
      this.fenced = fenced;
    }
  }

  int holders() {
    return handles.size();
  }

  List<DefaultLockHandle> handles() {
    return handles;
  }

  void addHandle(DefaultLockHandle h) {
    handles.add(h);
  }

  boolean removeHandle(DefaultLockHandle h) {
    return handles.remove(h);
  }

  /** Nobody holds, fetches or releases the lock here: the state may leave the table. */
  boolean isFree() {
    return session == null && !busy && handles.isEmpty() && !unlockPending;
  }

  /**
   * A shared acquire may join the shared holders, as a reader of another process would get in:
   * unless a waiter is queued here (an exclusive one, which it must not overtake). Past the handoff
   * cap the table first asks the server whether a writer waits there.
   */
  boolean canJoin(LockMode mode) {
    return mode == LockMode.SHARED && serverMode == LockMode.SHARED && !handles.isEmpty()
        && !hasWaiters() && session != null && session.leaseValid();
  }

  boolean hasWaiters() {
    return waiters != null && !waiters.isEmpty();
  }

  Waiter peekWaiter() {
    return waiters == null ? null : waiters.peekFirst();
  }

  Waiter pollWaiter() {
    return waiters == null ? null : waiters.pollFirst();
  }

  void enqueue(Waiter w) {
    if (waiters == null) {
      waiters = new ArrayDeque<>(2);
    }
    waiters.addLast(w);
  }

  void removeWaiter(Waiter w) {
    if (waiters != null) {
      waiters.remove(w);
    }
  }
}
