package io.pglock.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * B5's cost half: one idle window of this JVM, measuring the process's CPU time, the CPU time of
 * pglock's own threads (named {@code pglock...}), and the statements one backend ran meanwhile.
 *
 * <p>Process CPU is the sum over the JVM's threads (Java and native: GC, JIT) of their run time in
 * {@code /proc/self/task/<tid>/schedstat}, in nanoseconds: the JDK's {@code getProcessCpuTime()}
 * counts in clock ticks of 10 ms on Linux, too coarse for an idle process. A thread that ends within
 * the window loses its share; elsewhere than Linux the JDK's figure is used.
 *
 * <p>Statements are counted by sampling that backend's {@code query_start} in
 * {@code pg_stat_activity} every {@link #SAMPLE_NANOS} on a monitor connection (a lower bound:
 * two statements between samples count once). Both sides of B5 are sampled alike, so the samples'
 * own CPU cancels out of the difference.
 */
final class IdleWindow {
  static final long SAMPLE_NANOS = 1_000_000_000L;

  /** What one window measured. */
  record Result(double seconds, double processCpuMillis, double pglockThreadsCpuMillis, int statements) {
    double processCpuPerSecond() {
      return processCpuMillis / seconds;
    }

    double pglockThreadsCpuPerSecond() {
      return pglockThreadsCpuMillis / seconds;
    }
  }

  private IdleWindow() {}

  /**
   * Measures a window of the given length.
   *
   * @param monitor connection for the samples of {@code pg_stat_activity}
   * @param watchedPid the backend whose statements are counted
   */
  static Result measure(Connection monitor, int watchedPid, long windowNanos) throws SQLException {
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    try (PreparedStatement ps = monitor.prepareStatement(
        "SELECT query_start FROM pg_stat_activity WHERE pid = ?")) {
      ps.setInt(1, watchedPid);
      Timestamp last = queryStart(ps, watchedPid);
      int statements = 0;
      Map<Long, Long> threadCpu0 = pglockThreadCpu(threads);
      Map<Long, Long> taskCpu0 = TaskCpu.read();
      long cpu0 = os.getProcessCpuTime();
      long t0 = System.nanoTime();
      long end = t0 + windowNanos;
      long next = t0;
      while ((next += SAMPLE_NANOS) - end <= 0) {
        LossLatency.parkFor(next - System.nanoTime());
        Timestamp now = queryStart(ps, watchedPid);
        if (!Objects.equals(now, last)) {
          statements++;
          last = now;
        }
      }
      LossLatency.parkFor(end - System.nanoTime());
      long cpu1 = os.getProcessCpuTime();
      long t1 = System.nanoTime();
      Map<Long, Long> taskCpu1 = TaskCpu.read();
      Map<Long, Long> threadCpu1 = pglockThreadCpu(threads);
      long pglockNanos = delta(threadCpu0, threadCpu1);
      long processNanos = taskCpu0 != null && taskCpu1 != null ? delta(taskCpu0, taskCpu1) : cpu1 - cpu0;
      return new Result((t1 - t0) / 1e9, processNanos / 1e6, pglockNanos / 1e6, statements);
    }
  }

  /** CPU used between two readings by thread id, by the threads alive at the second. */
  private static long delta(Map<Long, Long> before, Map<Long, Long> after) {
    long sum = 0;
    for (Map.Entry<Long, Long> e : after.entrySet()) {
      sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
    }
    return sum;
  }

  private static Timestamp queryStart(PreparedStatement ps, int pid) throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        throw new IllegalStateException("backend " + pid + " went away during the idle window");
      }
      return rs.getTimestamp(1);
    }
  }

  /** CPU time so far of each live thread whose name starts with "pglock", by thread id. */
  private static Map<Long, Long> pglockThreadCpu(ThreadMXBean threads) {
    Map<Long, Long> cpu = new HashMap<>();
    for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info != null && info.getThreadName().startsWith("pglock")) {
        long ns = threads.getThreadCpuTime(info.getThreadId());
        if (ns >= 0) {
          cpu.put(info.getThreadId(), ns);
        }
      }
    }
    return cpu;
  }
}
