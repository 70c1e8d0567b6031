package io.pglock.cli;

import java.util.regex.Pattern;

/**
 * A lock-name pattern as shells write them: {@code *} for any run of characters, {@code ?} for one,
 * everything else literal ({@code invoice-*}, {@code report-202?}). A pattern without wildcards
 * matches its name only. Immutable.
 */
final class NameGlob {
  private final String glob;
  private final Pattern regex;

  NameGlob(String glob) {
    this.glob = glob;
    StringBuilder re = new StringBuilder();
    for (int i = 0; i < glob.length(); i++) {
      char c = glob.charAt(i);
      if (c == '*') {
        re.append(".*");
      } else if (c == '?') {
        re.append('.');
      } else {
        re.append(Pattern.quote(String.valueOf(c)));
      }
    }
    this.regex = Pattern.compile(re.toString(), Pattern.DOTALL);
  }

  /** {@return whether the name matches; null (a raw key has no name) never does} */
  boolean matches(String name) {
    return name != null && regex.matcher(name).matches();
  }

  /** {@return the pattern for SQL {@code LIKE ... ESCAPE '\'}: % and _ escaped, the wildcards translated} */
  String like() {
    StringBuilder like = new StringBuilder();
    for (int i = 0; i < glob.length(); i++) {
      char c = glob.charAt(i);
      switch (c) {
        case '*' -> like.append('%');
        case '?' -> like.append('_');
        case '%', '_', '\\' -> like.append('\\').append(c);
        default -> like.append(c);
      }
    }
    return like.toString();
  }

  @Override
  public String toString() {
    return glob;
  }
}
