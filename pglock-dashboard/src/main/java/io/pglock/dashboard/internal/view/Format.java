package io.pglock.dashboard.internal.view;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** How times, ages and numbers are written on the pages: UTC, to the second, and short ages. */
public final class Format {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'")
      .withZone(ZoneOffset.UTC);

  private Format() {}

  /** {@return an instant in UTC to the second, or "-"} */
  public static String time(Instant t) {
    return t == null ? "-" : TIME.format(t);
  }

  /** {@return an instant as an ISO string for machines (the datetime attribute), or ""} */
  public static String iso(Instant t) {
    return t == null ? "" : t.toString();
  }

  /** {@return a short age such as 850 ms, 12 s, 4 min, 3 h, 2 d, or "-"} */
  public static String age(Duration d) {
    if (d == null) {
      return "-";
    }
    long ms = d.toMillis();
    String sign = ms < 0 ? "-" : "";
    ms = Math.abs(ms);
    if (ms < 1_000) {
      return sign + ms + " ms";
    }
    if (ms < 120_000) {
      return sign + (ms / 1_000) + " s";
    }
    if (ms < 7_200_000) {
      return sign + (ms / 60_000) + " min";
    }
    if (ms < 172_800_000) {
      return sign + (ms / 3_600_000) + " h";
    }
    return sign + (ms / 86_400_000) + " d";
  }

  /** {@return the age of an instant now, or "-"} */
  public static String ago(Instant t) {
    return t == null ? "-" : age(Duration.between(t, Instant.now())) + " ago";
  }

  /** {@return a number in short form: 950, 12.3k, 1.2M} */
  public static String compact(long n) {
    if (n < 10_000) {
      return String.format("%,d", n);
    }
    if (n < 1_000_000) {
      return String.format("%.1fk", n / 1_000.0);
    }
    return String.format("%.1fM", n / 1_000_000.0);
  }

  /** {@return text cut to a length, with an ellipsis} */
  public static String cut(String s, int max) {
    if (s == null) {
      return "";
    }
    return s.length() <= max ? s : s.substring(0, max - 1) + "\u2026";
  }
}
