package io.pglock.cli;

import java.io.PrintWriter;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.Objects;

/**
 * The demo's output: whole lines, each stamped with the wall-clock time, flushed at once so that
 * lines from concurrent workers interleave in the order they happened. Thread-safe.
 */
final class Console {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

  private final PrintWriter out;

  Console(PrintWriter out) {
    this.out = Objects.requireNonNull(out, "out");
  }

  /** Prints one line stamped with the current time. */
  synchronized void event(String line) {
    out.println(LocalTime.now().format(TIME) + " " + line);
    out.flush();
  }

  /** Prints one line as it is. */
  synchronized void plain(String line) {
    out.println(line);
    out.flush();
  }
}
