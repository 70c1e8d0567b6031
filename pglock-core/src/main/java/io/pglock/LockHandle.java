package io.pglock;

import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * A held advisory lock. Closing the handle releases the lock.
 *
 * <p><b>Ownership</b> belongs to the handle, not to a thread: any thread may close it, including a
 * virtual thread or an async callback other than the one that acquired it.
 *
 * <p><b>Release</b>: {@link #close()} is idempotent, thread-safe, never blocks on the network and
 * throws nothing. Once it returns, the caller no longer owns the lock; the server frees it in the
 * lock session's next round trip (usually within a millisecond). Late release is possible, early
 * release never.
 *
 * <p><b>On connection loss</b>: if the lock session's connection fails, or no round trip succeeds
 * within the lease (see {@link PgLocksBuilder#lease(java.time.Duration)}), the handle moves to
 * {@link HandleState#LOST} no later than the moment the server could give the lock to someone
 * else; {@link #lost()} completes with the cause and {@link #onLoss} callbacks run on the
 * configured executor. The lease is read on the monotonic and the wall clock, so a suspended VM
 * does not make an expired lock look held. A lock can be lost before pglock knows only in one case:
 * an administrator's {@code pg_terminate_backend}, a shutdown or a crash frees it immediately; an
 * idle session reads the server's FATAL message within 40 ms (about 20 ms typically), and where
 * no message comes (a vanished host), the holder learns at its next round trip, at the latest at
 * the lease deadline.
 * Protect the resource with a fencing check where that window matters.
 */
public interface LockHandle extends AutoCloseable {

  /** {@return the lock's key} */
  LockKey key();

  /** {@return the mode the lock is held in} */
  LockMode mode();

  /**
   * The fencing token that came with this grant: a number that strictly increases with every grant
   * of the lock (across client restarts, server crashes and failovers), to be checked by the
   * protected resource so that a former holder's late write is refused. See {@code docs/fencing.md}.
   *
   * @return the token, positive
   * @throws IllegalStateException if the lock was acquired without fencing (see
   *     {@link SessionLock#withFencing()} and {@link PgLocksBuilder#fencing()})
   */
  long fencingToken();

  /** {@return where the handle is in its life} Never goes back to {@code HELD}. */
  HandleState state();

  /**
   * True while the handle is {@link HandleState#HELD} and the lock session's lease has not run
   * out. Checks the lease deadline itself, without waiting for the network.
   *
   * @return whether the lock is still held
   */
  boolean isHeld();

  /**
   * Returns normally if {@link #isHeld()}.
   *
   * @throws LockNotHeldException naming the key and whether the handle was closed or lost (and why)
   */
  void ensureHeld();

  /**
   * Completes with the cause if the lock is lost before the handle is closed; never completes if
   * the handle is closed first. Dependent stages run on the configured callback executor.
   *
   * @return a stage that completes with the cause of the loss
   */
  CompletionStage<LossCause> lost();

  /**
   * Runs the callback, on the configured callback executor, if the lock is lost before the handle
   * is closed (at once if it already was). Callbacks run in registration order; an exception from
   * one is logged and does not stop the others. A callback may see a state that has moved on.
   *
   * @param callback receives the cause of the loss
   * @return this handle
   */
  LockHandle onLoss(Consumer<LossCause> callback);

  /** Releases the lock. Idempotent, any thread, never throws, never waits for the network. */
  @Override
  void close();
}
