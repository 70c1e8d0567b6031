package io.pglock.internal;

import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.LockSessionException;
import io.pglock.LockTimeoutException;
import io.pglock.PgLocks;
import io.pglock.SessionLock;
import io.pglock.SessionSemaphore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A semaphore built on the public lock API alone: permit i is the exclusive session lock on the
 * name {@code "semaphore:<name>#<i>"}. Acquiring tries the permits one by one from a random one on
 * (so that callers spread over the permits instead of all asking for permit 0); waiting alternates
 * a bounded server wait on one permit with another round of tries, the wait growing from
 * {@link #FIRST_WAIT_CHUNK} to {@link SessionSemaphore#MAX_WAIT_CHUNK_MILLIS}, so that a freed
 * permit other than the one waited on is found without polling the server in a tight loop.
 */
final class DefaultSessionSemaphore implements SessionSemaphore {
  /** The first bounded wait on one permit; short, since another permit may free meanwhile. */
  static final Duration FIRST_WAIT_CHUNK = Duration.ofMillis(10);
  private static final long MAX_WAIT_CHUNK_NANOS = TimeUnit.MILLISECONDS.toNanos(MAX_WAIT_CHUNK_MILLIS);
  /** The longest suffix a permit adds to the name: "#" and the largest permit number. */
  private static final int MAX_SUFFIX_BYTES = ("#" + (MAX_PERMITS - 1)).length();
  /** The longest semaphore name, in UTF-8 bytes, whose permit names still fit a lock name. */
  static final int MAX_NAME_BYTES = LockKey.MAX_NAME_BYTES - PERMIT_NAME_PREFIX.length() - MAX_SUFFIX_BYTES;

  private final PgLocks locks;
  private final String name;
  private final List<SessionLock> permitLocks;

  DefaultSessionSemaphore(PgLocks locks, String name, int permits) {
    checkName(name);
    checkPermits(name, permits);
    this.locks = locks;
    this.name = name;
    List<SessionLock> permitLocks = new ArrayList<>(permits);
    for (int i = 0; i < permits; i++) {
      permitLocks.add(locks.lock(LockKey.named(locks.config().namespace(), permitName(name, i))));
    }
    this.permitLocks = List.copyOf(permitLocks);
  }

  /** The lock name of a permit: the prefix keeps it apart from ordinary names, the last '#' from the number. */
  static String permitName(String semaphore, int permit) {
    return PERMIT_NAME_PREFIX + semaphore + "#" + permit;
  }

  private static void checkName(String name) {
    if (name == null) {
      throw new IllegalArgumentException("semaphore name must not be null");
    }
    if (name.isBlank()) {
      throw new IllegalArgumentException("semaphore name must not be blank: \"" + name + "\"");
    }
    int bytes = name.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_NAME_BYTES) {
      throw new IllegalArgumentException("semaphore name is " + bytes + " UTF-8 bytes, longer than "
          + MAX_NAME_BYTES + " (\"" + name.substring(0, 20) + "...\"), which leaves room in a lock name for \""
          + PERMIT_NAME_PREFIX + "\" and \"#<permit>\"; use a shorter name");
    }
  }

  private static void checkPermits(String name, int permits) {
    if (permits < 1 || permits > MAX_PERMITS) {
      throw new IllegalArgumentException("semaphore \"" + name + "\" must have from 1 to " + MAX_PERMITS
          + " permits, not " + permits + (permits < 1 ? "; give it at least one"
              : "; a try costs up to one round trip per permit, so for more holders use several semaphores"));
    }
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public int permits() {
    return permitLocks.size();
  }

  @Override
  public LockKey permitKey(int permit) {
    if (permit < 0 || permit >= permits()) {
      throw new IllegalArgumentException("semaphore \"" + name + "\" has permits 0 to " + (permits() - 1)
          + ", not " + permit);
    }
    return permitLocks.get(permit).key();
  }

  @Override
  public Optional<LockHandle> tryAcquire() {
    try {
      return Optional.ofNullable(tryEveryPermit(randomPermit(), false));
    } catch (InterruptedException e) {
      throw new AssertionError("an uninterruptible try was interrupted", e);
    }
  }

  @Override
  public Optional<LockHandle> tryAcquire(Duration timeout) throws InterruptedException {
    long nanos = DefaultSessionLock.checkTimeout(timeout);
    checkInterrupt("before acquiring");
    return Optional.ofNullable(await(System.nanoTime() + nanos, false));
  }

  @Override
  public LockHandle acquire(Duration timeout) throws InterruptedException {
    long start = System.nanoTime();
    Optional<LockHandle> h = tryAcquire(timeout);
    if (h.isEmpty()) {
      String namespace = locks.config().namespace();
      throw new LockTimeoutException("timed out after " + Duration.ofNanos(System.nanoTime() - start).toMillis()
          + " ms waiting for a permit of " + this + " (node " + locks.config().nodeName() + ", "
          + locks.heldLocks() + " locks held here); every permit is held: see pg_locks for the keys "
          + "pglock.key('" + namespace + "', '" + permitName(name, 0) + "') to #" + (permits() - 1)
          + ", or wait longer");
    }
    return h.get();
  }

  @Override
  public LockHandle acquire() throws InterruptedException {
    checkInterrupt("before acquiring");
    return await(0, true);
  }

  /**
   * Rounds of tries of every permit, with a bounded wait on one permit in between, until a permit
   * is granted or the deadline passes (then one last round is tried). A round that fails for want
   * of the database is forgiven while time is left: the wait in between reconnects.
   *
   * @param deadline on {@link System#nanoTime()}; ignored if forever
   * @return the handle, or null if the deadline passed first
   */
  private LockHandle await(long deadline, boolean forever) throws InterruptedException {
    int permit = randomPermit();
    long chunk = FIRST_WAIT_CHUNK.toNanos();
    while (true) {
      LockSessionException failed = null;
      try {
        LockHandle h = tryEveryPermit(permit, true);
        if (h != null) {
          return h;
        }
      } catch (LockSessionException e) {
        failed = e;
      }
      long left = forever ? chunk : deadline - System.nanoTime();
      if (left <= 0) {
        if (failed != null) {
          throw failed;
        }
        return null;
      }
      Optional<LockHandle> h = permitLocks.get(permit).tryAcquire(Duration.ofNanos(Math.min(chunk, left)));
      if (h.isPresent()) {
        return h.get();
      }
      chunk = Math.min(chunk * 2, MAX_WAIT_CHUNK_NANOS);
      permit = (permit + 1) % permits(); // the next wait sleeps on another permit, in case this one is stuck
    }
  }

  /** One try of every permit, from the given one on; null if every permit is held. */
  private LockHandle tryEveryPermit(int first, boolean interruptible) throws InterruptedException {
    for (int i = 0; i < permits(); i++) {
      if (interruptible) {
        checkInterrupt("while acquiring");
      }
      Optional<LockHandle> h = permitLocks.get((first + i) % permits()).tryAcquire();
      if (h.isPresent()) {
        return h.get();
      }
    }
    return null;
  }

  private int randomPermit() {
    return ThreadLocalRandom.current().nextInt(permits());
  }

  private void checkInterrupt(String when) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted " + when + " a permit of " + this);
    }
  }

  @Override
  public String toString() {
    return "SessionSemaphore[" + locks.config().namespace() + ":" + name + ", " + permits() + " permits]";
  }
}
