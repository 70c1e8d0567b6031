package io.pglock.queue.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The column {@code trace_context}: a map of strings as a flat JSON object, written and read here
 * rather than by the queue's {@link io.pglock.queue.JsonMapper} (a user's mapper may add type
 * information to maps, and a job's trace context must read the same whatever mapper wrote it).
 * Reads what PostgreSQL's {@code jsonb} prints back: any JSON object whose values are strings.
 */
final class TraceContextJson {
  private TraceContextJson() {}

  /** {@return the map as a JSON object, or null for null or an empty map} @throws IllegalArgumentException on a null key or value */
  static String write(Map<String, String> map) {
    if (map == null || map.isEmpty()) {
      return null;
    }
    StringBuilder b = new StringBuilder(32 + map.size() * 64).append('{');
    for (Map.Entry<String, String> e : map.entrySet()) {
      if (e.getKey() == null || e.getValue() == null) {
        throw new IllegalArgumentException("a trace context may not hold nulls: " + map);
      }
      if (b.length() > 1) {
        b.append(',');
      }
      string(b, e.getKey());
      b.append(':');
      string(b, e.getValue());
    }
    return b.append('}').toString();
  }

  private static void string(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch == '"' || ch == '\\') {
        b.append('\\').append(ch);
      } else if (ch < 0x20) {
        b.append(String.format("\\u%04x", (int) ch));
      } else {
        b.append(ch);
      }
    }
    b.append('"');
  }

  /**
   * {@return the map of a JSON object of strings} @throws IllegalArgumentException if the text is not one
   *
   * @param json the column's text (not null)
   */
  static Map<String, String> read(String json) {
    Reader r = new Reader(json);
    Map<String, String> map = new LinkedHashMap<>();
    r.expect('{');
    if (!r.next('}')) {
      do {
        String key = r.string();
        r.expect(':');
        map.put(key, r.string());
      } while (r.next(','));
      r.expect('}');
    }
    r.end();
    return map;
  }

  private static final class Reader {
    private final String s;
    private int i;

    Reader(String s) {
      this.s = s;
    }

    private void blanks() {
      while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == '\n' || s.charAt(i) == '\t' || s.charAt(i) == '\r')) {
        i++;
      }
    }

    /** Consumes ch if it comes next. */
    boolean next(char ch) {
      blanks();
      if (i < s.length() && s.charAt(i) == ch) {
        i++;
        return true;
      }
      return false;
    }

    void expect(char ch) {
      if (!next(ch)) {
        throw bad("'" + ch + "' expected");
      }
    }

    void end() {
      blanks();
      if (i != s.length()) {
        throw bad("end expected");
      }
    }

    String string() {
      expect('"');
      StringBuilder b = new StringBuilder();
      while (i < s.length()) {
        char ch = s.charAt(i++);
        if (ch == '"') {
          return b.toString();
        }
        if (ch != '\\') {
          b.append(ch);
          continue;
        }
        if (i >= s.length()) {
          break;
        }
        char esc = s.charAt(i++);
        switch (esc) {
          case '"', '\\', '/' -> b.append(esc);
          case 'b' -> b.append('\b');
          case 'f' -> b.append('\f');
          case 'n' -> b.append('\n');
          case 'r' -> b.append('\r');
          case 't' -> b.append('\t');
          case 'u' -> {
            if (i + 4 > s.length()) {
              throw bad("short \\u escape");
            }
            try {
              b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
            } catch (NumberFormatException e) {
              throw bad("bad \\u escape");
            }
            i += 4;
          }
          default -> throw bad("bad escape \\" + esc);
        }
      }
      throw bad("unterminated string");
    }

    private IllegalArgumentException bad(String what) {
      return new IllegalArgumentException("not a JSON object of strings (" + what + " at " + i + "): " + s);
    }
  }
}
