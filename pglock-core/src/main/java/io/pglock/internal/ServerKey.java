package io.pglock.internal;

import io.pglock.LockKey;

/**
 * The lock PostgreSQL actually takes: key space ({@code objsubid} 1 or 2) and 64 bits. Local state is
 * kept per server key, not per {@link LockKey}, so that a name and the 64-bit key its hash gives (or
 * two names whose hashes collide) can never be held twice on one connection.
 */
record ServerKey(int objsubid, long value) {

  static ServerKey of(LockKey key) {
    return new ServerKey(key.objsubid(), key.space() == LockKey.KeySpace.INT32_PAIR
        ? ((long) key.first() << 32) | (key.second() & 0xFFFF_FFFFL) : key.int64());
  }

  /** The first argument of the lock functions: the 64-bit key, or the first int of a pair. */
  long firstArg() {
    return objsubid == 1 ? value : (int) (value >>> 32);
  }

  /** The second argument of the two-int lock functions (unused for 64-bit keys). */
  int secondArg() {
    return objsubid == 1 ? 0 : (int) value;
  }

  /** {@code pg_locks.classid}, unsigned. */
  long classid() {
    return value >>> 32;
  }

  /** {@code pg_locks.objid}, unsigned. */
  long objid() {
    return value & 0xFFFF_FFFFL;
  }
}
