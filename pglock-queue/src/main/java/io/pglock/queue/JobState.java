package io.pglock.queue;

/** Where a job is in its life; the database's {@code job.state}. */
public enum JobState {
  /** Waiting to run, from its {@code run_at} on. */
  AVAILABLE,
  /** Being worked by a worker (which holds its advisory lock, or its lease in lease mode). */
  RUNNING,
  /** Done: the handler returned. Final. */
  SUCCEEDED,
  /** An attempt failed and another is due at {@code run_at} (after the backoff). */
  RETRYABLE,
  /** Failed its last allowed attempt (or the handler asked to discard it). Final until retried by hand. */
  DISCARDED,
  /** Cancelled before it ran, or while it ran and its handler gave up. Final. */
  CANCELLED;

  /** {@return the value stored in the database} */
  public String dbValue() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  /**
   * {@return the state of a database value} @throws IllegalArgumentException for an unknown value
   *
   * @param value the database value
   */
  public static JobState ofDb(String value) {
    return valueOf(value.toUpperCase(java.util.Locale.ROOT));
  }

  /** {@return true for the states a job does not leave by itself} */
  public boolean isFinal() {
    return this == SUCCEEDED || this == DISCARDED || this == CANCELLED;
  }
}
