package io.pglock.cli;

import io.pglock.LockEntry;
import io.pglock.LockKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The table {@code pglock locks} prints: one row per holder or waiter of an advisory lock, the
 * holders of each lock first and its waiters right under them (indented), so that a queue reads top
 * to bottom. Stateless.
 */
final class LocksTable {
  static final List<String> HEADER =
      List.of("LOCK", "MODE", "STATE", "PID", "NODE", "CLIENT", "SCOPE", "SINCE", "WAITS FOR");
  private static final int[] MAX_WIDTHS = {60, 9, 7, 7, 40, 40, 12, 8, 24};
  private static final String WAITER_INDENT = "  ";

  private LocksTable() {}

  /**
   * The table's lines for the entries as {@link io.pglock.LockListing#list()} returns them, with ages
   * counted to {@code now}, and a last line counting holders and waiters.
   */
  static List<String> lines(List<LockEntry> entries, Instant now) {
    if (entries.isEmpty()) {
      return List.of("no advisory locks held or awaited");
    }
    TextTable table = new TextTable(HEADER, MAX_WIDTHS);
    for (List<LockEntry> lock : byServerLock(entries).values()) {
      lock.stream().filter(LockEntry::granted).sorted(Comparator.comparingInt(LockEntry::pid))
          .forEach(e -> table.add(row(e, now)));
      lock.stream().filter(e -> !e.granted()).sorted(Comparator.comparing(e -> e.since().orElse(Instant.MAX)))
          .forEach(e -> table.add(row(e, now)));
    }
    List<String> lines = new ArrayList<>(table.lines());
    long held = entries.stream().filter(LockEntry::granted).count();
    lines.add(held + " held, " + (entries.size() - held) + " waiting");
    return lines;
  }

  /** How a lock is shown: {@code namespace:name} when pglock knows the name, else its raw key. */
  static String lockName(LockKey key) {
    return switch (key.space()) {
      case NAME -> key.namespace() + ":" + key.name();
      case INT64 -> Long.toString(key.int64());
      case INT32_PAIR -> "(" + key.first() + "," + key.second() + ")";
    };
  }

  /** The entries grouped by the server lock they are on, groups in the order they first appear. */
  private static Map<ServerLock, List<LockEntry>> byServerLock(List<LockEntry> entries) {
    return entries.stream().collect(Collectors.groupingBy(e -> ServerLock.of(e.key()), LinkedHashMap::new,
        Collectors.toList()));
  }

  private static List<String> row(LockEntry e, Instant now) {
    String client = e.node().isPresent() ? e.role().orElse("pglock")
        : e.applicationName().isEmpty() ? "-" : e.applicationName();
    return List.of(
        (e.granted() ? "" : WAITER_INDENT) + lockName(e.key()),
        e.mode().name().toLowerCase(Locale.ROOT),
        e.granted() ? "held" : "waiting",
        Integer.toString(e.pid()),
        e.node().orElse("-"),
        client + e.clientAddress().map(a -> " (" + a + ")").orElse(""),
        // PostgreSQL cannot tell a transaction lock from a session lock while a transaction is open.
        e.scope().equals("session") ? "session" : "session/xact",
        e.since().map(s -> Ages.format(Duration.between(s, now))).orElse("-"),
        e.blockedBy().isEmpty() ? "" : e.blockedBy().stream().map(String::valueOf).collect(Collectors.joining(",")));
  }

  /** A lock as the server knows it: a named key and the 64-bit key its hash gives are the same lock. */
  private record ServerLock(int objsubid, int first, int second) {
    static ServerLock of(LockKey key) {
      return new ServerLock(key.objsubid(), key.first(), key.second());
    }
  }
}
