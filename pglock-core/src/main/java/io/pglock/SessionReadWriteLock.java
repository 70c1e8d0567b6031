package io.pglock;

/**
 * A pair of session locks on one key: many readers ({@link LockMode#SHARED}) or one writer
 * ({@link LockMode#EXCLUSIVE}), across every process that locks the key.
 */
public interface SessionReadWriteLock {

  /** The key. */
  LockKey key();

  /** The shared lock. */
  SessionLock readLock();

  /** The exclusive lock. */
  SessionLock writeLock();
}
