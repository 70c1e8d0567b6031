package io.pglock.schedule;

/** Why a run happens. */
public enum RunKind {
  /** Its slot came. */
  SCHEDULED,
  /** Its slot was missed and the task's {@link MissedSlots} policy runs it late. */
  CATCH_UP,
  /** Someone triggered it ({@link Scheduler#trigger}, {@code pglock tasks trigger}). */
  MANUAL
}
