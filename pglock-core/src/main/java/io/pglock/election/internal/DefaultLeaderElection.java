package io.pglock.election.internal;

import io.pglock.LockHandle;
import io.pglock.LossCause;
import io.pglock.PgLocks;
import io.pglock.PgLocksClosedException;
import io.pglock.PgLocksListener;
import io.pglock.SessionLock;
import io.pglock.election.Candidate;
import io.pglock.election.LeaderElection;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import io.pglock.internal.GuardedListener;
import io.pglock.internal.LossCauseWait;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node in one election: a thread that stands (a blocking acquire of the election's fenced
 * lock), leads (calls the candidate, watches the handle) and revokes. See the package doc for the
 * states and rules.
 */
public final class DefaultLeaderElection implements LeaderElection {
  private static final Logger log = LoggerFactory.getLogger(DefaultLeaderElection.class);
  /** How often a leader looks at its handle's lease itself, besides the loss callback: local, no I/O. */
  private static final long WATCH_MILLIS = 100;
  private static final long WATCH_NANOS = TimeUnit.MILLISECONDS.toNanos(WATCH_MILLIS);
  private final Duration lease;
  /** How long the thread waits before standing again after an unexpected acquire failure. */
  private static final Duration RETRY_AFTER_FAILURE = Duration.ofSeconds(1);

  private final String name;
  private final String node;
  private final String namespace;
  private final String lockName;
  private final Candidate candidate;
  private final SessionLock lock;
  private final Duration firstAttemptJitter;
  private final Duration backoffMin;
  private final Duration backoffMax;
  private final Duration closeTimeout;
  private final Thread thread;
  private final CountDownLatch stopped = new CountDownLatch(1);
  /** The PgLocks's listener behind a guard (it never throws); null when none was set. */
  private final PgLocksListener listener;

  private final Object monitor = new Object();
  private boolean interruptible; // guarded by monitor: the thread waits in acquire() or a back-off
  private boolean closing; // guarded by monitor
  private Throwable broken; // guarded by monitor: a reportBroken not yet acted on
  private boolean resign; // guarded by monitor
  private LockHandle handle; // guarded by monitor: the current term's
  private LossCauseWait loss; // guarded by monitor: why the current term's handle is no longer held
  private Term term; // guarded by monitor: the current one, null when not leading

  public DefaultLeaderElection(PgLocks locks, String name, Candidate candidate, Duration firstAttemptJitter,
      Duration backoffMin, Duration backoffMax, Duration closeTimeout) {
    this.name = name;
    this.node = locks.config().nodeName();
    this.namespace = locks.config().namespace();
    this.lockName = LeaderElection.lockName(name);
    this.candidate = Objects.requireNonNull(candidate, "candidate");
    this.lock = locks.lock(lockName).withFencing();
    this.lease = locks.config().lease();
    this.listener = GuardedListener.of(locks.config().listener());
    this.firstAttemptJitter = firstAttemptJitter;
    this.backoffMin = backoffMin;
    this.backoffMax = backoffMax;
    this.closeTimeout = closeTimeout;
    this.thread = new Thread(this::run, "pglock-" + node + "-election-" + name);
    this.thread.setDaemon(true);
  }

  /** Starts the election's thread. */
  public void start() {
    thread.start();
  }

  @Override
  public String name() {
    return name;
  }

  /** The handle's own answer, by the lease clock: false from the lease deadline on, whatever the thread does. */
  @Override
  public boolean isLeader() {
    synchronized (monitor) {
      return term != null && handle.isHeld();
    }
  }

  @Override
  public Optional<Term> currentTerm() {
    synchronized (monitor) {
      return term != null && handle.isHeld() ? Optional.of(term) : Optional.empty();
    }
  }

  @Override
  public void resign() {
    synchronized (monitor) {
      if (term != null && !closing) {
        resign = true;
        monitor.notifyAll();
      }
    }
  }

  @Override
  public void reportBroken(Throwable cause) {
    Objects.requireNonNull(cause, "cause");
    synchronized (monitor) {
      if (closing) {
        return;
      }
      log.info("election {} on node {}: reported broken ({}); {} and backing off", name, node, cause,
          term != null ? "ending the term" : "not standing");
      broken = cause;
      wake();
    }
  }

  @Override
  public void close() {
    synchronized (monitor) {
      closing = true;
      wake();
    }
    if (Thread.currentThread() == thread) {
      return; // from a callback: the loop revokes and releases when it returns
    }
    boolean done;
    try {
      done = stopped.await(closeTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      done = false;
    }
    if (!done) {
      LockHandle h;
      synchronized (monitor) {
        h = handle;
      }
      log.warn("election {} on node {}: the election's thread did not stop within {} (a callback still runs?); "
          + "releasing the lock anyway", name, node, closeTimeout);
      if (h != null) {
        h.close();
      }
    }
  }

  /** Wakes the thread: from a monitor wait, and, if it waits in acquire() or a back-off, by interrupt. */
  private void wake() {
    monitor.notifyAll();
    if (interruptible) {
      thread.interrupt();
    }
  }

  private void run() {
    try {
      pause(random(Duration.ZERO, firstAttemptJitter));
      while (!isClosing()) {
        Throwable wasBroken;
        synchronized (monitor) {
          wasBroken = broken;
          broken = null;
        }
        if (wasBroken != null) {
          pause(random(backoffMin, backoffMax));
          continue;
        }
        LockHandle h = stand();
        if (h != null) {
          lead(h);
        }
      }
    } catch (RuntimeException | Error e) {
      log.error("election {} on node {}: the election's thread failed; this node no longer stands", name, node, e);
    } finally {
      stopped.countDown();
    }
  }

  private boolean isClosing() {
    synchronized (monitor) {
      return closing;
    }
  }

  /** Waits for the lock; null if woken (close, a broken report) or the acquire failed. */
  private LockHandle stand() {
    if (!enterInterruptible()) {
      return null;
    }
    boolean failed = false;
    try {
      return lock.acquire();
    } catch (InterruptedException e) {
      return null;
    } catch (PgLocksClosedException e) {
      synchronized (monitor) {
        closing = true;
      }
      return null;
    } catch (RuntimeException e) {
      log.warn("election {} on node {}: standing failed ({}); standing again in {}", name, node, e,
          RETRY_AFTER_FAILURE);
      failed = true;
      return null;
    } finally {
      leaveInterruptible();
      if (failed) {
        pause(RETRY_AFTER_FAILURE);
      }
    }
  }

  /** Leads one term: elected, watch until it ends, revoked, released. */
  private void lead(LockHandle h) {
    Term t = new Term(name, node, h.fencingToken(), Instant.now(), namespace, lockName);
    synchronized (monitor) {
      if (closing) {
        h.close(); // closed while the grant came in: never elected
        return;
      }
      handle = h;
      term = t;
      resign = false;
      loss = new LossCauseWait(h, lease, () -> {
        synchronized (monitor) {
          monitor.notifyAll();
        }
      });
    }
    log.debug("election {}: node {} elected, token {}", name, node, t.fencingToken());
    if (listener != null) {
      listener.leadershipChanged(namespace, name, true);
    }
    try {
      candidate.elected(t);
    } catch (RuntimeException | Error e) {
      log.error("election {} on node {}: the candidate's elected callback threw; the term ends as BROKEN",
          name, node, e);
      synchronized (monitor) {
        if (broken == null) {
          broken = e;
        }
      }
    }
    Revocation why = awaitEnd(h);
    log.debug("election {}: node {} revoked ({}), token {}", name, node, why, t.fencingToken());
    if (listener != null) {
      listener.leadershipChanged(namespace, name, false);
    }
    try {
      candidate.revoked(t, why);
    } catch (RuntimeException | Error e) {
      log.error("election {} on node {}: the candidate's revoked callback threw; ignored", name, node, e);
    } finally {
      h.close(); // after the revocation: a clean end elects a successor only now
    }
  }

  /** Waits until the term ends, and says why; the term is no longer current when this returns. */
  private Revocation awaitEnd(LockHandle h) {
    synchronized (monitor) {
      Revocation why;
      while ((why = reason(h)) == null) {
        try {
          TimeUnit.NANOSECONDS.timedWait(monitor, loss.sleepNanos(System.nanoTime(), WATCH_NANOS));
        } catch (InterruptedException e) {
          // not interruptible here: a stray interrupt from user code; the conditions decide
        }
      }
      handle = null;
      loss = null;
      term = null;
      return why;
    }
  }

  /** Why the term ended, or null if it goes on. Must hold the monitor. */
  private Revocation reason(LockHandle h) {
    LossCause cause = loss.poll(System.nanoTime());
    if (cause == null && !h.isHeld()) {
      return null; // the term is over (isLeader() says so already); its cause is being recorded
    }
    if (cause != null) {
      switch (cause) {
        case CONNECTION_LOST:
          return Revocation.CONNECTION_LOST;
        case LEASE_EXPIRED:
          return Revocation.LEASE_EXPIRED;
        default:
          closing = true; // the PgLocks was closed
          return Revocation.SHUTDOWN;
      }
    }
    if (closing) {
      return Revocation.SHUTDOWN;
    }
    if (broken != null) {
      return Revocation.BROKEN; // left set: the loop backs off
    }
    if (resign) {
      resign = false;
      return Revocation.RELEASED;
    }
    return null;
  }

  /** Sleeps, unless woken by close or a broken report. */
  private void pause(Duration d) {
    if (d.isZero() || !enterInterruptible()) {
      return;
    }
    try {
      TimeUnit.NANOSECONDS.sleep(d.toNanos());
    } catch (InterruptedException e) {
      // woken
    } finally {
      leaveInterruptible();
    }
  }

  private boolean enterInterruptible() {
    synchronized (monitor) {
      if (closing || broken != null) {
        return false;
      }
      interruptible = true;
      return true;
    }
  }

  private void leaveInterruptible() {
    synchronized (monitor) {
      interruptible = false;
    }
    Thread.interrupted(); // a wake that came just as the wait ended
  }

  private static Duration random(Duration min, Duration max) {
    long span = max.toNanos() - min.toNanos();
    return span <= 0 ? min : min.plusNanos(ThreadLocalRandom.current().nextLong(span + 1));
  }

  @Override
  public String toString() {
    synchronized (monitor) {
      return "LeaderElection[" + name + ", node=" + node + (term != null ? ", leading, token " + term.fencingToken()
          : closing ? ", closed" : ", standing") + "]";
    }
  }
}
