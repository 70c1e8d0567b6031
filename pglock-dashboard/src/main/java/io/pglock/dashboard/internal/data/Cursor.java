package io.pglock.dashboard.internal.data;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.Optional;

/**
 * A keyset position: the sort key of the last row shown (a time and an id, or an id alone), written
 * into the "next page" link as {@code <epoch micros>.<id>} or {@code <id>}.
 *
 * @param time the time part, or null
 * @param id the id part
 */
public record Cursor(Instant time, long id) {
  /** A time after every row: the first page. */
  static final Timestamp END_TIME = Timestamp.from(Instant.parse("9999-01-01T00:00:00Z"));

  /** {@return the cursor text for a time and an id} */
  public static String of(Instant time, long id) {
    if (time == null) {
      return Long.toString(id);
    }
    long micros = time.getEpochSecond() * 1_000_000L + time.getNano() / 1_000;
    return micros + "." + id;
  }

  /** {@return a cursor read from its text; empty if absent or malformed (the first page)} */
  public static Optional<Cursor> parse(Optional<String> text) {
    if (text.isEmpty()) {
      return Optional.empty();
    }
    String s = text.get();
    try {
      int dot = s.indexOf('.');
      if (dot < 0) {
        return Optional.of(new Cursor(null, Long.parseLong(s)));
      }
      long micros = Long.parseLong(s.substring(0, dot));
      Instant t = Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
      return Optional.of(new Cursor(t, Long.parseLong(s.substring(dot + 1))));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("the page cursor '" + s + "' is not one the dashboard wrote: start from the"
          + " first page");
    }
  }

  /** {@return the time part as a JDBC timestamp (the end of time if absent)} */
  Timestamp timestamp() {
    return time == null ? END_TIME : Timestamp.from(time);
  }
}
