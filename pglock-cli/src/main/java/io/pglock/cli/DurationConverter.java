package io.pglock.cli;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads a duration option: a number with a unit ({@code 500ms}, {@code 30s}, {@code 2m},
 * {@code 1h}, {@code 7d}, {@code 1.5s}), a bare number of seconds as {@code flock -w} takes it ({@code 30},
 * {@code 0.5}), or ISO-8601 ({@code PT30S}). Negative durations are refused; the options set their
 * own upper limits. Stateless and thread-safe.
 */
final class DurationConverter implements ITypeConverter<Duration> {
  private static final Pattern NUMBER_AND_UNIT = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h|d)?");

  @Override
  public Duration convert(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    if (t.startsWith("pt") || t.startsWith("-pt")) {
      return fromIso(text);
    }
    Matcher m = NUMBER_AND_UNIT.matcher(t);
    if (!m.matches()) {
      throw new TypeConversionException("'" + text + "' is not a duration; use for example 500ms, 30s, 2m, 1h, 7d, "
          + "or a number of seconds");
    }
    BigDecimal amount = new BigDecimal(m.group(1));
    String unit = m.group(2) == null ? "s" : m.group(2);
    BigDecimal nanosPerUnit = BigDecimal.valueOf(switch (unit) {
      case "ms" -> 1_000_000L;
      case "m" -> 60_000_000_000L;
      case "h" -> 3_600_000_000_000L;
      case "d" -> 86_400_000_000_000L;
      default -> 1_000_000_000L;
    });
    BigDecimal nanos = amount.multiply(nanosPerUnit);
    // A year is far beyond any limit an option sets; anything longer is a typo, not a wish.
    if (nanos.compareTo(BigDecimal.valueOf(Duration.ofDays(366).toNanos())) > 0) {
      throw new TypeConversionException("'" + text + "' is longer than a year");
    }
    return Duration.ofNanos(nanos.longValue());
  }

  private static Duration fromIso(String text) {
    Duration d;
    try {
      d = Duration.parse(text.trim());
    } catch (DateTimeParseException e) {
      throw new TypeConversionException("'" + text + "' is not an ISO-8601 duration such as PT30S");
    }
    if (d.isNegative()) {
      throw new TypeConversionException("'" + text + "' is negative");
    }
    return d;
  }

  /** "30s", "500ms", "2m", "1.5s": how a duration is shown back to the user. */
  static String format(Duration d) {
    if (d.toNanos() % 1_000_000_000L != 0 || d.isZero()) {
      return d.toMillis() + "ms";
    }
    long s = d.getSeconds();
    if (s % 3600 == 0) {
      return s / 3600 + "h";
    }
    return s % 60 == 0 ? s / 60 + "m" : s + "s";
  }
}
