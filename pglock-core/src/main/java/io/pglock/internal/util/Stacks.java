package io.pglock.internal.util;

/**
 * A throwable's stack, trimmed for a history row (task runs, job errors): its first frames and those
 * of its causes. Public for pglock's other modules; not an API.
 */
public final class Stacks {
  private static final int FRAMES = 12;
  private static final int MAX_CHARS = 4000;

  private Stacks() {}

  /** {@return the trimmed stack: at most 12 frames per throwable, 5 causes deep, 4,000 characters} */
  public static String trimmed(Throwable error) {
    StringBuilder sb = new StringBuilder();
    Throwable t = error;
    for (int depth = 0; t != null && depth < 5; depth++, t = t.getCause()) {
      if (depth > 0) {
        sb.append("Caused by: ").append(t).append('\n');
      }
      StackTraceElement[] frames = t.getStackTrace();
      for (int i = 0; i < Math.min(FRAMES, frames.length); i++) {
        sb.append("\tat ").append(frames[i]).append('\n');
      }
      if (frames.length > FRAMES) {
        sb.append("\t... ").append(frames.length - FRAMES).append(" more\n");
      }
    }
    return trim(sb.toString(), MAX_CHARS);
  }

  /** {@return the text cut to at most max characters, ending with "..." when cut} */
  public static String trim(String s, int max) {
    return s == null || s.length() <= max ? s : s.substring(0, max - 3) + "...";
  }
}
