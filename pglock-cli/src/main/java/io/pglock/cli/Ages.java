package io.pglock.cli;

import java.time.Duration;

/** How long something has lasted, the way {@code ps} and {@code kubectl} show it: "45s", "3m12s", "2h05m", "3d04h". */
final class Ages {
  private Ages() {}

  /** {@return the duration in its two largest units; a negative one (clocks disagree by a little) as "0s"} */
  static String format(Duration d) {
    long s = Math.max(0, d.getSeconds());
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return s / 60 + "m" + String.format("%02ds", s % 60);
    }
    if (s < 86_400) {
      return s / 3600 + "h" + String.format("%02dm", s % 3600 / 60);
    }
    return s / 86_400 + "d" + String.format("%02dh", s % 86_400 / 3600);
  }
}
