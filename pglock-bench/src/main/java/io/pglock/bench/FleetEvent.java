package io.pglock.bench;

/**
 * One line a B8 contender printed: its keyword ({@code ELECTED}, {@code REVOKED}, ...), the rest of
 * the line, and the time: the contender's own {@link System#nanoTime()} from the line where it gives
 * one (comparable with the parent's on Linux: CLOCK_MONOTONIC), else the time the parent read it.
 */
record FleetEvent(Contender who, String kind, String detail, long nanos) {
  boolean is(String k) {
    return kind.equals(k);
  }
}
