package io.pglock.queue;

/**
 * Thrown by a handler for a failure that no retry can fix (bad input): the job is discarded at once,
 * with this error recorded, whatever attempts remain.
 */
public class DiscardJobException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * A failure that discards the job.
   *
   * @param message why the job cannot succeed
   */
  public DiscardJobException(String message) {
    super(message);
  }

  /**
   * A failure that discards the job, with its cause.
   *
   * @param message why the job cannot succeed
   * @param cause the underlying failure
   */
  public DiscardJobException(String message, Throwable cause) {
    super(message, cause);
  }
}
