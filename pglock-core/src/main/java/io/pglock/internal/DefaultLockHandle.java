package io.pglock.internal;

import io.pglock.HandleState;
import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.LockMode;
import io.pglock.LockNotHeldException;
import io.pglock.LossCause;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/** A handle on a lock held through a {@link LockTable}. Its state moves by compare-and-set. */
final class DefaultLockHandle implements LockHandle {
  private final LockTable table;
  final KeyState state;
  /** The session the lock was granted on: the key's session may change after this handle is lost. */
  private final LockSession session;
  private final LockKey key;
  private final LockMode mode;
  /** The fencing token of the grant; 0 when acquired without fencing. */
  private final long token;
  private final AtomicReference<HandleState> life = new AtomicReference<>(HandleState.HELD);
  private volatile LossCause lossCause;
  private volatile String lossDetail;
  /** Created on first use: most handles are never asked about loss. Guarded by {@code this}. */
  private CompletableFuture<LossCause> lost;
  private List<Consumer<LossCause>> callbacks;

  DefaultLockHandle(LockTable table, KeyState state, LockSession session, LockKey key, LockMode mode, long token) {
    this.table = table;
    this.state = state;
    this.session = session;
    this.key = key;
    this.mode = mode;
    this.token = token;
  }

  /** The session the lock was granted on: its backend pid and start name the holder in the history. */
  LockSession session() {
    return session;
  }

  /** Why the handle was lost; null while it was not. */
  LossCause lossCause() {
    LossCause c = lossCause;
    if (c == null && life.get() == HandleState.HELD && !session.leaseValid()) {
      c = session.lossCause() != null ? session.lossCause() : LossCause.LEASE_EXPIRED;
    }
    return c;
  }

  @Override
  public long fencingToken() {
    if (token == 0) {
      throw new IllegalStateException(key + " was acquired without fencing: acquire it through "
          + "SessionLock.withFencing(), or build the PgLocks with fencing()");
    }
    return token;
  }

  @Override
  public LockKey key() {
    return key;
  }

  @Override
  public LockMode mode() {
    return mode;
  }

  /**
   * The handle's state as every accessor sees it: a handle whose session died or whose lease has
   * run out is LOST at once, even before the loss broadcast reaches it.
   */
  @Override
  public HandleState state() {
    HandleState now = life.get();
    return now == HandleState.HELD && !session.leaseValid() ? HandleState.LOST : now;
  }

  @Override
  public boolean isHeld() {
    return life.get() == HandleState.HELD && session.leaseValid();
  }

  @Override
  public void ensureHeld() {
    HandleState now = state();
    if (now == HandleState.HELD) {
      return;
    }
    if (now == HandleState.RELEASED) {
      throw new LockNotHeldException("the handle on " + key + " was closed; acquire a new handle");
    }
    throw new LockNotHeldException("the lock on " + key + " was lost ("
        + (lossCause != null ? lossCause + ": " + lossDetail
            : session.lossCause() != null ? session.lossCause() + ": " + session.failure()
            : "the lock session's lease ran out")
        + "); acquire a new handle, and check what was done under the lock");
  }

  @Override
  public synchronized CompletionStage<LossCause> lost() {
    if (lost == null) {
      lost = new CompletableFuture<>();
      if (lossCause != null) {
        table.callbacks().execute(() -> lost.complete(lossCause));
      }
    }
    return lost.minimalCompletionStage();
  }

  @Override
  public LockHandle onLoss(Consumer<LossCause> callback) {
    java.util.Objects.requireNonNull(callback, "callback");
    LossCause already;
    synchronized (this) {
      already = lossCause;
      if (already == null) {
        if (callbacks == null) {
          callbacks = new ArrayList<>(1);
        }
        callbacks.add(callback);
        return this;
      }
    }
    table.callbacks().run(callback, already);
    return this;
  }

  @Override
  public void close() {
    if (life.compareAndSet(HandleState.HELD, HandleState.RELEASED)) {
      table.release(this);
    }
  }

  /** Moves a held handle to LOST and signals it. Called by the table without its stripe monitor. */
  void markLost(LossCause cause, String detail) {
    if (!life.compareAndSet(HandleState.HELD, HandleState.LOST)) {
      return;
    }
    io.pglock.PgLocksListener l = table.listener();
    if (l != null) {
      l.lockLost(table.namespace(), cause);
    }
    List<Consumer<LossCause>> toRun;
    CompletableFuture<LossCause> future;
    synchronized (this) {
      lossDetail = detail;
      lossCause = cause;
      toRun = callbacks;
      callbacks = null;
      future = lost;
    }
    if (future != null) {
      table.callbacks().execute(() -> future.complete(cause));
    }
    if (toRun != null) {
      for (Consumer<LossCause> c : toRun) {
        table.callbacks().run(c, cause);
      }
    }
  }

  @Override
  public String toString() {
    return "LockHandle[" + key + " " + mode + " " + life.get() + "]";
  }
}
