package io.pglock.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The CPU time of some of the server's backends (those whose application_name is given), read from
 * {@code /proc/<pid>/stat} (user + system, in clock ticks of 10 ms): possible when the server runs on this
 * host and this process may read its processes' stat files, else -1. And the CPU time of this JVM's
 * threads whose name starts with a prefix.
 */
final class BackendCpu {
  private BackendCpu() {}

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  /** Linux's USER_HZ: /proc counts CPU time in hundredths of a second. */
  static final long TICK_NANOS = 10_000_000L;

  /** {@return the CPU time in nanoseconds of the backends named so, or -1 if it cannot be read} */
  static long nanos(Connection monitor, String applicationName) throws SQLException {
    long ticks = 0;
    try (PreparedStatement ps = monitor.prepareStatement("SELECT pid FROM pg_stat_activity"
        + " WHERE datname = current_database() AND application_name = ?")) {
      ps.setString(1, applicationName);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String stat = Files.readString(Path.of("/proc/" + rs.getInt(1) + "/stat"));
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
        }
      }
    } catch (java.io.IOException | RuntimeException e) {
      return -1;
    }
    return ticks * TICK_NANOS;
  }

  /** {@return the CPU time in nanoseconds of this JVM's live threads whose name starts with the prefix} */
  static long threadNanos(String prefix) {
    long sum = 0;
    for (java.lang.management.ThreadInfo t : THREADS.dumpAllThreads(false, false)) {
      if (t.getThreadName().startsWith(prefix)) {
        long n = THREADS.getThreadCpuTime(t.getThreadId());
        sum += Math.max(0, n);
      }
    }
    return sum;
  }
}
