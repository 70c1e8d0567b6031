package io.pglock.internal.recording;

import java.time.Instant;

/**
 * One hold of a lock for the history: its state when it began ({@code open}) or when it ended.
 * Both states of a hold share its id, so that the newer one replaces the older in the table.
 *
 * <p>Public only for the engine in {@code io.pglock.internal}, which makes the records; not API.
 */
public record HoldRecord(long id, String namespace, String name, long key, String node, int pid, Instant backendStart,
    Instant acquiredAt, Instant releasedAt, String outcome, String lossCause, String errorClass,
    String errorMessage, String errorStack) {

  /** The most characters of an error message kept. */
  static final int MAX_MESSAGE = 2_000;
  /** The most stack frames kept (of the work's exception and each cause); 8,000 characters in all. */
  static final int MAX_FRAMES = 30;

  /**
   * The hold's state when it ended.
   *
   * @return a copy of this open record with its end, outcome and error
   */
  public HoldRecord ended(Instant at, String outcome, String lossCause, Throwable error) {
    return new HoldRecord(id, namespace, name, key, node, pid, backendStart, acquiredAt, at, outcome, lossCause,
        error == null ? null : error.getClass().getName(),
        error == null ? null : trim(String.valueOf(error.getMessage()), MAX_MESSAGE),
        error == null ? null : stack(error));
  }

  /** The stack, trimmed: at most {@link #MAX_FRAMES} frames per throwable, causes included. */
  static String stack(Throwable error) {
    StringBuilder b = new StringBuilder();
    java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    for (Throwable t = error; t != null && seen.add(t); t = t.getCause()) {
      if (t != error) {
        b.append("Caused by: ");
      }
      b.append(t).append('\n');
      StackTraceElement[] frames = t.getStackTrace();
      for (int i = 0; i < Math.min(frames.length, MAX_FRAMES); i++) {
        b.append("\tat ").append(frames[i]).append('\n');
      }
      if (frames.length > MAX_FRAMES) {
        b.append("\t... ").append(frames.length - MAX_FRAMES).append(" more\n");
      }
    }
    return trim(b.toString(), 8_000);
  }

  private static String trim(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max - 1) + "…";
  }
}
