package io.pglock;

/**
 * A pair of session locks on one key: many readers ({@link LockMode#SHARED}) or one writer
 * ({@link LockMode#EXCLUSIVE}), across every process that locks the key.
 */
public interface SessionReadWriteLock {

  /** {@return the key} */
  LockKey key();

  /** {@return the shared lock} */
  SessionLock readLock();

  /** {@return the exclusive lock} */
  SessionLock writeLock();
}
