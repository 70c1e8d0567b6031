package io.pglock.internal;

import io.pglock.LockKey;
import io.pglock.LockMode;
import io.pglock.LockSessionException;
import io.pglock.PgLocksConfig;
import java.util.concurrent.locks.LockSupport;

/**
 * The representative's work for a {@link LockTable}: get a key's lock from the server, with a
 * try-lock on the key's lock session, then, if the caller waits, a blocking wait on a wait session
 * (in chunks) or, when every wait session is busy, polling with backoff.
 *
 * <p><b>Bounded.</b> No step waits longer than the caller's deadline plus the connect timeout,
 * whatever the network does: a try whose answer does not come is abandoned (a late grant is
 * released by the session), a blocking wait past its deadline is cancelled from another thread, and
 * opening a session is waited for only that long.
 *
 * <p><b>Through a restart.</b> A wait with time left that loses its session (the server stopped, a
 * backend was terminated) reconnects with backoff and keeps waiting; only a try without a timeout,
 * or a wait whose time is up, reports the failure.
 *
 * <p><b>Interrupts</b> are read at the loop's checkpoints only, and every exit goes through one
 * place: an interruptible wait throws {@link InterruptedException} (flag cleared); otherwise the
 * flag is set again on return, whatever the outcome.
 */
final class ServerFetch {
  private static final long MAX_POLL_NANOS = 100_000_000L;
  private static final long FIRST_POLL_NANOS = 2_000_000L;
  private static final long FIRST_RECONNECT_NANOS = 50_000_000L;
  private static final long MAX_RECONNECT_NANOS = 1_000_000_000L;

  private final LockTable table;
  private final PgLocksConfig config;
  private final Sessions sessions;

  ServerFetch(LockTable table, PgLocksConfig config, Sessions sessions) {
    this.table = table;
    this.config = config;
    this.sessions = sessions;
  }

  /** How a wait on a wait session ended. */
  private enum WaitEnd { GRANTED, TIMED_OUT, INTERRUPTED, RETRY }

  /** The representative's work: get the lock from the server, waiting there if need be. */
  DefaultLockHandle fetch(KeyState st, LockKey lockKey, LockMode mode, long timeoutNanos,
      long deadline, boolean interruptible, boolean fenced) throws InterruptedException {
    DefaultLockHandle handle = null;
    boolean reserved = false;
    boolean interrupted = false;
    boolean reported = false;
    long bound = config.connectTimeout().toNanos();
    // Nothing below waits past this: the call's own deadline plus the connect timeout.
    long callBound = timeoutNanos == LockTable.NO_WAIT ? System.nanoTime() + bound
        : deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline + bound;
    try {
      table.reserve(lockKey);
      reserved = true;
      long poll = FIRST_POLL_NANOS;
      long reconnect = FIRST_RECONNECT_NANOS;
      boolean retriedTry = false;
      while (true) {
        interrupted |= Thread.interrupted();
        if (interrupted && interruptible) {
          reported = true;
          throw new InterruptedException("interrupted while waiting for " + lockKey);
        }
        LockSession ls;
        long got;
        try {
          ls = sessions.lockSessionFor(st.key, callBound);
          got = tryOnce(ls, st.key, mode, fenced, callBound);
        } catch (LockSessionException e) {
          if (!retryable(e)) {
            throw e;
          }
          // The session failed (a restart, a terminated backend) or could not be opened: the dead
          // session freed whatever it held. A try gets one more attempt; a wait, as long as it has time.
          boolean again = timeoutNanos == LockTable.NO_WAIT ? !retriedTry && System.nanoTime() - callBound < 0
              : !past(deadline);
          if (!again) {
            throw e;
          }
          if (retriedTry) { // the first retry goes at once: a terminated backend's session reopens quickly
            pause(Math.min(reconnect, left(deadline)));
            reconnect = Math.min(reconnect * 2, MAX_RECONNECT_NANOS);
          }
          retriedTry = true;
          continue;
        }
        reconnect = FIRST_RECONNECT_NANOS;
        retriedTry = false;
        if (got != 0) {
          handle = table.grant(st, lockKey, mode, ls, fenced ? got : 0);
          break;
        }
        if (timeoutNanos == LockTable.NO_WAIT || past(deadline)) {
          return null;
        }
        LockSession ws;
        try {
          ws = sessions.borrowWaitSession(callBound);
        } catch (LockSessionException e) {
          ws = null; // no new connection to be had (max_connections, say): poll on the lock session
        }
        if (ws != null) {
          long[] token = new long[1];
          WaitEnd end = waitOn(ws, st.key, mode, fenced, token, deadline, interruptible, bound);
          if (end == WaitEnd.GRANTED) {
            handle = table.grant(st, lockKey, mode, ws, token[0]);
            break;
          }
          if (end == WaitEnd.TIMED_OUT) {
            return null;
          }
          continue; // interrupted (the checkpoint reports it), or the wait session failed: try again
        }
        // Every wait session is busy: poll with backoff.
        pause(Math.min(poll, left(deadline)));
        poll = Math.min(poll * 2, MAX_POLL_NANOS);
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
      interrupted |= Thread.interrupted();
      if (interrupted && !reported) {
        Thread.currentThread().interrupt(); // never swallow an interrupt that was not reported
      }
    }
  }

  /** Whether the deadline ({@link Long#MAX_VALUE}: none) has passed, whatever the sign of nanoTime. */
  private static boolean past(long deadline) {
    return deadline != Long.MAX_VALUE && System.nanoTime() - deadline >= 0;
  }

  /** Nanoseconds left until the deadline ({@link Long#MAX_VALUE} when there is none). */
  private static long left(long deadline) {
    return deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
  }

  /** Session failures worth another attempt: not a closed instance, a refused database or capacity. */
  private static boolean retryable(LockSessionException e) {
    return e.getClass() == LockSessionException.class;
  }

  /** Parks for a pause of the retry loop; an interrupt ends it early and stays set. */
  private void pause(long nanos) {
    if (nanos > 0) {
      LockSupport.parkNanos(this, nanos);
    }
  }

  /**
   * Whether an exclusive request for the key waits on the server, asked on the session that holds
   * the key's shared lock here; answered within the connect timeout or abandoned.
   *
   * @throws LockSessionException if the session failed or gave no answer in time
   */
  boolean writerWaiting(LockSession ls, ServerKey key) {
    Op op = Op.writerWaiting(key);
    ls.submit(op, true);
    if (!op.awaitUninterruptibly(System.nanoTime() + config.connectTimeout().toNanos()) && op.abandon()) {
      throw new LockSessionException(ls.name + " gave no answer within the connect timeout ("
          + config.connectTimeout().toMillis() + " ms): the database or the network is not answering", null);
    }
    return op.result();
  }

  /**
   * One try-lock on the key's lock session, answered by {@code answerBy} or abandoned (a late grant
   * is then released by the session).
   *
   * @return 0 if not granted; else the fencing token if fenced, 1 if not
   *
   * @throws LockSessionException if the session failed or gave no answer in time
   */
  private long tryOnce(LockSession ls, ServerKey key, LockMode mode, boolean fenced, long answerBy) {
    Op op = Op.tryLock(key, mode, fenced);
    ls.submit(op, true);
    if (!op.awaitUninterruptibly(answerBy) && op.abandon()) {
      throw new LockSessionException(ls.name + " gave no answer within the connect timeout ("
          + config.connectTimeout().toMillis() + " ms) beyond the call's own timeout: the database or the "
          + "network is not answering; nothing was acquired (a late grant is released at once)", null);
    }
    return !op.result() ? 0 : fenced ? op.token() : 1;
  }

  /**
   * Waits on a wait session, in chunks of at most a third of the lease: each chunk is a round trip
   * that renews the wait session's lease, so a long wait never looks like a dead session. The wait
   * session is given back here, or, when a wait is abandoned, by the session once the statement
   * has ended; a granted wait session holds the lock and goes back when it is released. The token
   * of a fenced grant goes to {@code tokenOut[0]}.
   */
  private WaitEnd waitOn(LockSession ws, ServerKey key, LockMode mode, boolean fenced, long[] tokenOut,
      long deadline, boolean interruptible, long bound) {
    long chunkMs = Math.max(1, config.lease().toMillis() / 3);
    boolean uninterruptedWait = false;
    try {
      while (true) {
        long remainingMs = deadline == Long.MAX_VALUE ? chunkMs
            : Math.min(chunkMs, (deadline - System.nanoTime() + 999_999) / 1_000_000);
        if (remainingMs <= 0) {
          sessions.returnWaitSession(ws);
          return WaitEnd.TIMED_OUT;
        }
        Op op = Op.waitLock(key, mode, remainingMs, fenced);
        ws.submit(op, false);
        // The server ends the wait itself (lock_timeout); the bound covers a server that does not answer.
        long until = System.nanoTime() + remainingMs * 1_000_000 + bound;
        while (!op.awaitUntil(until)) {
          boolean interrupted = Thread.currentThread().isInterrupted();
          if (interrupted && !interruptible && System.nanoTime() - until < 0) {
            Thread.interrupted(); // uninterruptible: keep waiting, and set the flag again at the end
            uninterruptedWait = true;
            continue;
          }
          if (op.abandon()) {
            // The session releases the lock if the server granted it anyway, then goes back to the pool.
            // ...but only once the cancel has gone out too, so that it cannot stop the next waiter's statement.
            java.util.concurrent.atomic.AtomicInteger pending = new java.util.concurrent.atomic.AtomicInteger(2);
            Runnable giveBack = () -> {
              if (pending.decrementAndGet() == 0) {
                sessions.returnWaitSession(ws);
              }
            };
            op.whenSettled(giveBack);
            ws.cancelStatement(giveBack);
            if (interrupted && interruptible) {
              return WaitEnd.INTERRUPTED;
            }
            // past the deadline, or a chunk stalled: a wait with time left tries again elsewhere
            return past(deadline) ? WaitEnd.TIMED_OUT : WaitEnd.RETRY;
          }
          // answered just now: take the answer
        }
        boolean granted;
        try {
          granted = op.result();
        } catch (LockSessionException e) {
          sessions.returnWaitSession(ws);
          if (ws.isDead() && e.getClass() == LockSessionException.class) {
            return WaitEnd.RETRY; // it held nothing: wait again on another session
          }
          throw e;
        } catch (RuntimeException e) {
          sessions.returnWaitSession(ws);
          throw e;
        }
        if (granted) {
          tokenOut[0] = op.token(); // 0 unless fenced
          return WaitEnd.GRANTED;
        }
        if (Thread.currentThread().isInterrupted() && interruptible) {
          sessions.returnWaitSession(ws);
          return WaitEnd.INTERRUPTED;
        }
        if (past(deadline)) {
          sessions.returnWaitSession(ws);
          return WaitEnd.TIMED_OUT;
        }
      }
    } finally {
      if (uninterruptedWait) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
