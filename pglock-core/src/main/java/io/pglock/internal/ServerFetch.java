package io.pglock.internal;

import io.pglock.LockKey;
import io.pglock.LockMode;
import io.pglock.PgLocksConfig;
import java.util.concurrent.locks.LockSupport;

/**
 * The representative's work for a {@link LockTable}: get a key's lock from the server, with a
 * try-lock on the key's lock session, then, if the caller waits, a blocking wait on a wait session
 * (in chunks) or, when every wait session is busy, polling with backoff.
 */
final class ServerFetch {
  private static final long MAX_POLL_NANOS = 100_000_000L;
  private static final long FIRST_POLL_NANOS = 2_000_000L;

  private final LockTable table;
  private final PgLocksConfig config;
  private final Sessions sessions;

  ServerFetch(LockTable table, PgLocksConfig config, Sessions sessions) {
    this.table = table;
    this.config = config;
    this.sessions = sessions;
  }

  /** The representative's work: get the lock from the server, waiting there if need be. */
  DefaultLockHandle fetch(KeyState st, LockKey lockKey, LockMode mode, long timeoutNanos,
      long deadline, boolean interruptible) throws InterruptedException {
    DefaultLockHandle handle = null;
    boolean reserved = false;
    boolean interrupted = false;
    try {
      table.reserve(lockKey);
      reserved = true;
      long poll = FIRST_POLL_NANOS;
      boolean retriedDeadSession = false;
      while (true) {
        LockSession ls = sessions.lockSessionFor(st.key);
        Op op = Op.tryLock(st.key, mode);
        ls.submit(op, true);
        boolean got;
        try {
          got = op.awaitUninterruptibly();
        } catch (io.pglock.LockSessionException e) {
          if (!ls.isDead() || retriedDeadSession) {
            throw e;
          }
          retriedDeadSession = true; // the dead session freed everything: once more on a new one
          continue;
        }
        if (got) {
          handle = table.grant(st, lockKey, mode, ls);
          break;
        }
        interrupted |= Thread.interrupted();
        if (interrupted && interruptible) {
          throw new InterruptedException("interrupted while waiting for " + lockKey);
        }
        if (timeoutNanos == LockTable.NO_WAIT || System.nanoTime() - deadline >= 0) {
          return null;
        }
        LockSession ws = sessions.borrowWaitSession();
        if (ws != null) {
          boolean granted = false;
          try {
            granted = waitOn(ws, st.key, mode, deadline, interruptible);
          } catch (io.pglock.LockSessionException e) {
            if (!ws.isDead()) {
              throw e;
            }
            // the wait session died holding nothing (terminated, say): wait on another one
          } finally {
            if (granted) {
              handle = table.grant(st, lockKey, mode, ws);
            } else {
              sessions.returnWaitSession(ws);
            }
          }
          if (granted) {
            break;
          }
          if (System.nanoTime() - deadline >= 0) {
            return null;
          }
          continue;
        }
        // Every wait session is busy: poll with backoff.
        long nap = Math.min(poll, deadline - System.nanoTime());
        poll = Math.min(poll * 2, MAX_POLL_NANOS);
        if (nap > 0) {
          LockSupport.parkNanos(this, nap);
        }
        interrupted |= Thread.interrupted();
        if (interrupted && interruptible) {
          throw new InterruptedException("interrupted while waiting for " + lockKey);
        }
      }
      reserved = false; // the held lock owns the reservation now
      return handle;
    } finally {
      if (reserved) {
        table.unreserve();
      }
      if (handle == null) {
        table.giveUp(st);
      }
      if (interrupted && !interruptible) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Waits on a wait session, in chunks of at most a third of the lease: each chunk is a round trip
   * that renews the wait session's lease, so a long wait never looks like a dead session.
   *
   * @return true if granted (the wait session now holds the lock), false on timeout
   */
  private boolean waitOn(LockSession ws, ServerKey key, LockMode mode, long deadline, boolean interruptible)
      throws InterruptedException {
    long chunkMs = Math.max(1, config.lease().toMillis() / 3);
    boolean interrupted = false;
    try {
      while (true) {
        long remainingMs = deadline == Long.MAX_VALUE ? chunkMs
            : Math.min(chunkMs, (deadline - System.nanoTime() + 999_999) / 1_000_000);
        if (remainingMs <= 0) {
          return false;
        }
        Op op = Op.waitLock(key, mode, remainingMs);
        ws.submit(op, false);
        // The server ends the wait itself (lock_timeout); the extra second only covers a lost answer.
        long until = System.nanoTime() + (remainingMs + 1_000) * 1_000_000;
        while (!op.awaitUntil(until)) {
          interrupted |= Thread.interrupted();
          if (interrupted && !interruptible && System.nanoTime() - until < 0) {
            continue; // uninterruptible: keep waiting
          }
          if (op.abandon()) {
            ws.cancelStatement(); // the session releases the lock if the server granted it anyway
            if (interrupted && interruptible) {
              throw new InterruptedException("interrupted while waiting for " + key);
            }
            return false;
          }
          // answered just now: take the answer
        }
        if (op.result()) {
          if (interrupted) {
            Thread.currentThread().interrupt(); // granted: the interrupt stays set for the caller
          }
          return true;
        }
        interrupted |= Thread.interrupted();
        if (interrupted && interruptible) {
          throw new InterruptedException("interrupted while waiting for " + key);
        }
        if (deadline != Long.MAX_VALUE && System.nanoTime() - deadline >= 0) {
          return false;
        }
      }
    } finally {
      if (interrupted && !interruptible) {
        Thread.currentThread().interrupt();
      }
    }
  }

}
