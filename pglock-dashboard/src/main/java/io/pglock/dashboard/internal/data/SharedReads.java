package io.pglock.dashboard.internal.data;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Results that every request of a dashboard may share for a while: the passes over thousands of
 * finished jobs behind the throughput charts and the finished counts. An open page refreshes every
 * few seconds, and each of its viewers would otherwise repeat them; per-minute bars and estimated
 * counts do not need to be fresher than {@link #TTL}. Two requests that find a result stale at the
 * same moment may both read it: harmless, and simpler than making one wait for the other.
 */
public final class SharedReads {
  /** How long a shared result is used. */
  public static final Duration TTL = Duration.ofSeconds(30);
  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

  private record Entry(Object value, long expiresNanos) {}

  /** {@return the fresh value of a name, or null} */
  Object get(String name) {
    Entry e = entries.get(name);
    return e != null && e.expiresNanos - System.nanoTime() > 0 ? e.value : null;
  }

  void put(String name, Object value) {
    entries.put(name, new Entry(value, System.nanoTime() + TTL.toNanos()));
  }
}
