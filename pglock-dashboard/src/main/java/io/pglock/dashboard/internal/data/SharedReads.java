package io.pglock.dashboard.internal.data;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Results that every request of a dashboard may share for a while. An open page refreshes every
 * few seconds, the overview and the queues page need the same figures, and each viewer would
 * otherwise repeat them: the passes over thousands of finished jobs behind the throughput charts and
 * the finished counts are shared for {@link #TTL} (per-minute bars and estimated counts need not be
 * fresher), each queue's waiting and running counts for {@link #LIVE_TTL}. Two requests that find a
 * result stale at the same moment may both read it: harmless, and simpler than making one wait.
 */
public final class SharedReads {
  /** How long a shared result is used. */
  public static final Duration TTL = Duration.ofSeconds(30);
  /**
   * How long the list of queues with jobs waiting or running is shared. Its skip scans probe the
   * head of each queue's range in the partial indexes, where a busy queue leaves the dead entries of
   * the jobs just claimed until vacuum: the most costly read of a refresh while workers run flat out
   * (B14), for a list that rarely changes. A new queue shows within this time.
   */
  public static final Duration QUEUES_TTL = Duration.ofSeconds(10);
  /** How long a queue's live counts are shared: less than a page's refresh interval. */
  public static final Duration LIVE_TTL = Duration.ofSeconds(2);
  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

  private record Entry(Object value, long expiresNanos) {}

  /** {@return the fresh value of a name, or null} */
  Object get(String name) {
    Entry e = entries.get(name);
    return e != null && e.expiresNanos - System.nanoTime() > 0 ? e.value : null;
  }

  void put(String name, Object value, Duration ttl) {
    entries.put(name, new Entry(value, System.nanoTime() + ttl.toNanos()));
  }
}
