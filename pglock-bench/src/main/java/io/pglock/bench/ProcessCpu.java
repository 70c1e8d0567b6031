package io.pglock.bench;

import java.lang.management.ManagementFactory;

/** The CPU time of this JVM, all threads (GC included): what a side costs, less blurred by others' load. */
final class ProcessCpu {
  private ProcessCpu() {}

  private static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  static long nanos() {
    return OS.getProcessCpuTime();
  }
}
