package io.pglock.spring.scheduling;

import java.lang.reflect.Method;
import java.time.Duration;
import org.springframework.boot.convert.DurationStyle;

/** Parses an annotation's duration text: ISO-8601 ({@code PT30S}) or Boot's simple form ({@code 30s}). */
final class Durations {
  private Durations() {}

  /**
   * Parses a duration attribute.
   *
   * @param text the attribute's value, placeholders resolved; empty: not set
   * @param attribute its name, for the error
   * @param method the annotated method, for the error
   * @return the duration, or null if empty
   * @throws IllegalArgumentException naming the method, the attribute and the forms accepted
   */
  static Duration parse(String text, String attribute, Method method) {
    if (text == null || text.isBlank()) {
      return null;
    }
    try {
      Duration d = DurationStyle.detectAndParse(text.trim());
      if (d.isNegative()) {
        throw new IllegalArgumentException("negative");
      }
      return d;
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(attribute + " = \"" + text + "\" on " + method.getDeclaringClass().getName()
          + "." + method.getName() + " is not a duration: write PT30S (ISO-8601) or 30s, 5m, 2h", e);
    }
  }
}
