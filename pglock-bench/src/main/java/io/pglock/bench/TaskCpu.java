package io.pglock.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** Run time of each of this process's threads, from Linux's {@code /proc/self/task/<tid>/schedstat}. */
final class TaskCpu {
  private static final Path TASKS = Path.of("/proc/self/task");

  private TaskCpu() {}

  /** Nanoseconds run so far by thread id, or null where there is no such file system. */
  static Map<Long, Long> read() {
    if (!Files.isDirectory(TASKS)) {
      return null;
    }
    Map<Long, Long> cpu = new HashMap<>();
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
      for (Path task : tasks) {
        try {
          String s = Files.readString(task.resolve("schedstat"));
          cpu.put(Long.parseLong(task.getFileName().toString()), Long.parseLong(s.substring(0, s.indexOf(' '))));
        } catch (IOException | RuntimeException e) {
          // the thread ended between listing and reading: its share is lost (see IdleWindow)
        }
      }
    } catch (IOException e) {
      return null;
    }
    return cpu;
  }
}
