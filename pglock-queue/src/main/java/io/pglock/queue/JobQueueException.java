package io.pglock.queue;

/** A database failure while enqueuing or administering jobs; the message says what was being done. */
public class JobQueueException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * A failure with the database's error.
   *
   * @param message what failed, and what to check
   * @param cause the database's error
   */
  public JobQueueException(String message, Throwable cause) {
    super(message, cause);
  }
}
