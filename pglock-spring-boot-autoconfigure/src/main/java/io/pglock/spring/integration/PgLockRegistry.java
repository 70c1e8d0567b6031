package io.pglock.spring.integration;

import io.pglock.LockHandle;
import io.pglock.PgLocks;
import io.pglock.SessionLock;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;

/**
 * A Spring Integration lock registry on pglock's session locks: a drop-in for
 * {@code JdbcLockRegistry} (and so for {@code LockRegistryLeaderInitiator}), without its lock table,
 * its time-to-live or its polling. A lock is held by this node's lock session; when the node dies
 * or loses its connection the server frees it at once, and a waiting node is woken when it is
 * released, so leadership moves in milliseconds instead of after the TTL.
 *
 * <p>Locks are reentrant per thread, as {@code JdbcLockRegistry}'s are: the first {@code lock()} of
 * a thread takes the advisory lock, the matching last {@code unlock()} releases it. A reentrant
 * {@code tryLock()} by the holding thread returns false once the lock was lost (its connection or
 * lease): that is how {@code LockRegistryLeaderInitiator} learns, at its next heartbeat, that it is no
 * longer the leader. That answer also drops every hold of the thread, so that its next
 * {@code tryLock} competes for the lock again (the initiator stands again after a revocation without
 * unlocking); each {@code unlock()} still owed for the dropped holds throws
 * {@link ConcurrentModificationException}. {@code unlock()} of a lost lock releases the thread's hold
 * and throws it too, as {@code JdbcLockRegistry} does for an expired lock, so that work done under it
 * is known to have been unprotected for a while. A reentrant {@code lock()} does not check: ask
 * {@code tryLock()}.
 *
 * <p>Keys are turned into lock names with {@code String.valueOf(key)}, prefixed with the
 * registry's region; the same key gives the same {@code Lock} object until
 * {@link #expireUnusedOlderThan} drops it.
 */
public final class PgLockRegistry implements ExpirableLockRegistry {
  private final PgLocks locks;
  private final String region;
  private final Map<String, PgLock> byName = new ConcurrentHashMap<>();

  /**
   * A registry with the region {@code "DEFAULT"}, as {@code JdbcLockRegistry}'s default.
   *
   * @param locks the node's instance
   */
  public PgLockRegistry(PgLocks locks) {
    this(locks, "DEFAULT");
  }

  /**
   * A registry whose lock names start with a region, so that several registries share a namespace.
   *
   * @param locks the node's instance
   * @param region a prefix of every lock name, such as the application's part of the fleet
   */
  public PgLockRegistry(PgLocks locks, String region) {
    this.locks = Objects.requireNonNull(locks, "locks");
    this.region = Objects.requireNonNull(region, "region");
    if (region.isEmpty()) {
      throw new IllegalArgumentException("region must not be empty");
    }
  }

  @Override
  public Lock obtain(Object lockKey) {
    Objects.requireNonNull(lockKey, "lockKey");
    String name = region + ":" + lockKey;
    return byName.computeIfAbsent(name, n -> new PgLock(locks.lock(n))).touch();
  }

  @Override
  public void expireUnusedOlderThan(long age) {
    long now = System.currentTimeMillis();
    byName.values().removeIf(l -> l.unusedSince(now - age));
  }

  /** A registry lock: a thread-reentrant hold of one session lock. */
  static final class PgLock implements Lock {
    private final SessionLock lock;
    private final ReentrantLock local = new ReentrantLock();
    private volatile LockHandle handle;
    private volatile long lastUsed = System.currentTimeMillis();
    /** The thread whose holds were dropped when it learned of a loss, and how many unlock() calls it owes. */
    private Thread droppedBy;
    private int dropped;

    PgLock(SessionLock lock) {
      this.lock = lock;
    }

    PgLock touch() {
      lastUsed = System.currentTimeMillis();
      return this;
    }

    boolean unusedSince(long cutoff) {
      return !local.isLocked() && lastUsed < cutoff;
    }

    @Override
    public void lock() {
      local.lock();
      if (local.getHoldCount() > 1) {
        return;
      }
      try {
        handle = lock.acquireUninterruptibly();
      } catch (RuntimeException | Error e) {
        local.unlock();
        throw e;
      }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
      local.lockInterruptibly();
      if (local.getHoldCount() > 1) {
        return;
      }
      try {
        handle = lock.acquire();
      } catch (InterruptedException | RuntimeException | Error e) {
        local.unlock();
        throw e;
      }
    }

    @Override
    public boolean tryLock() {
      if (!local.tryLock()) {
        return false;
      }
      return afterLocal(() -> lock.tryAcquire());
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
      long deadline = System.nanoTime() + unit.toNanos(time);
      if (!local.tryLock(time, unit)) {
        return false;
      }
      long left = Math.max(0, deadline - System.nanoTime());
      try {
        return afterLocal(() -> lock.tryAcquire(Duration.ofNanos(left)));
      } catch (InterruptedRun e) {
        throw e.cause;
      }
    }

    private boolean afterLocal(Acquire acquire) {
      if (local.getHoldCount() > 1) {
        // the thread holds it already: say whether it still does
        LockHandle h = handle;
        if (h != null && h.isHeld()) {
          return true;
        }
        // Lost: answer false, once, and drop every hold of this thread, so that its next try
        // competes for the lock again (LockRegistryLeaderInitiator revokes on this false and never
        // unlocks; a hold kept would answer false at once forever). Its unlock() calls for the
        // dropped holds throw ConcurrentModificationException, as unlock() of a lost lock does.
        dropLostHolds();
        return false;
      }
      try {
        Optional<LockHandle> got = acquire.get();
        if (got.isEmpty()) {
          local.unlock();
          return false;
        }
        handle = got.get();
        return true;
      } catch (InterruptedException e) {
        local.unlock();
        throw new InterruptedRun(e);
      } catch (RuntimeException | Error e) {
        local.unlock();
        throw e;
      }
    }

    private void dropLostHolds() {
      LockHandle h = handle;
      handle = null;
      if (h != null) {
        h.close();
      }
      int held = local.getHoldCount();
      synchronized (this) {
        droppedBy = Thread.currentThread();
        dropped = held - 1; // the holds taken before this try: each has an unlock() to come
      }
      for (int i = 0; i < held; i++) {
        local.unlock();
      }
    }

    @Override
    public void unlock() {
      if (!local.isHeldByCurrentThread()) {
        synchronized (this) {
          if (droppedBy == Thread.currentThread() && dropped > 0) {
            dropped--;
            throw lost("was lost while this thread held it (a tryLock said so and dropped its holds)");
          }
        }
        throw new IllegalMonitorStateException("this thread does not hold the lock \"" + lock.key() + "\"");
      }
      if (local.getHoldCount() > 1) {
        local.unlock();
        return;
      }
      LockHandle h = handle;
      handle = null;
      boolean wasHeld = h != null && h.isHeld();
      try {
        if (h != null) {
          h.close();
        }
      } finally {
        local.unlock();
      }
      if (!wasHeld) {
        throw lost("was lost before unlock() (" + (h == null ? "never taken" : h.state()) + ")");
      }
    }

    private ConcurrentModificationException lost(String what) {
      return new ConcurrentModificationException("the lock \"" + lock.key() + "\" " + what + ": its connection or"
          + " lease ended, and another node may have held it meanwhile");
    }

    @Override
    public Condition newCondition() {
      throw new UnsupportedOperationException("PgLockRegistry locks have no conditions: they are held across"
          + " processes, which a Condition cannot wait across");
    }

    @Override
    public String toString() {
      return "PgLock[" + lock.key() + ", " + (handle != null ? "held" : "free") + "]";
    }
  }

  @FunctionalInterface
  private interface Acquire {
    Optional<LockHandle> get() throws InterruptedException;
  }

  private static final class InterruptedRun extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient InterruptedException cause;

    InterruptedRun(InterruptedException cause) {
      super(cause);
      this.cause = cause;
    }
  }
}
