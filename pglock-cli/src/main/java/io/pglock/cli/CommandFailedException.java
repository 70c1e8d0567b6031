package io.pglock.cli;

/**
 * The command {@code pglock run --history} ran exited with a status other than 0: thrown from the
 * locked work so that the lock history records the hold as failed, with this class and the status
 * in its message ({@code pglock history --failed} shows it); {@code pglock run} exits with the
 * status.
 */
final class CommandFailedException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int status;

  CommandFailedException(int status, String command) {
    super(command + " exited with status " + status + (status > ExitCodes.SIGNAL_BASE
        ? " (ended by signal " + (status - ExitCodes.SIGNAL_BASE) + ")" : ""), null, false, false);
    this.status = status;
  }

  /** The command's exit status. */
  int status() {
    return status;
  }
}
