package io.pglock.cli;

/**
 * The exit codes of the {@code pglock} command, distinct so that a script can tell a failed check
 * from a typo in the options and from a database it could not reach.
 */
final class ExitCodes {
  /** Everything ran and every check held. */
  static final int OK = 0;
  /** A check failed, or the run failed for a reason other than the ones below. */
  static final int CHECK_FAILED = 1;
  /** Bad options: picocli's usage error code, kept so that it means the same here. */
  static final int USAGE = 2;
  /**
   * The database could not be reached: unreachable, refused the login, or the embedded PostgreSQL
   * did not start. Nothing was checked.
   */
  static final int UNREACHABLE = 3;

  private ExitCodes() {}
}
