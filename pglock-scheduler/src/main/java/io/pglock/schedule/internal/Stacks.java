package io.pglock.schedule.internal;

/** A throwable's stack, trimmed for the run history: its first frames and those of its causes. */
final class Stacks {
  private static final int FRAMES = 12;
  private static final int MAX_CHARS = 4000;

  private Stacks() {}

  static String trimmed(Throwable error) {
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
    return RunTable.trim(sb.toString(), MAX_CHARS);
  }
}
