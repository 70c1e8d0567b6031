package io.pglock;

/**
 * Work that runs while a lock is held: see {@link SessionLock#run(java.time.Duration, LockedWork)}.
 *
 * @param <T> what the work returns
 */
@FunctionalInterface
public interface LockedWork<T> {
  /**
   * Does the work. The lock is held when it starts; check {@link LockHandle#isHeld()} (or
   * {@link LockHandle#ensureHeld()}) before a step that must not run without it.
   *
   * @param handle the held lock
   * @return the work's result
   * @throws Exception anything the work throws: recorded in the history (when on) and passed on
   */
  T run(LockHandle handle) throws Exception;
}
