package io.pglock.cli;

/**
 * The exit codes of the {@code pglock} command, distinct so that a script can tell a failed check
 * from a typo in the options and from a database it could not reach.
 *
 * <p>{@code pglock run} passes on the command's own exit status when the command ran and the lock
 * was held throughout, as {@code flock(1)} does, so those statuses overlap with the codes here;
 * the line pglock prints on standard error says which one it was. See {@code docs/cli.md}.
 */
final class ExitCodes {
  /** Everything ran and every check held. */
  static final int OK = 0;
  /** A check failed, or the run failed for a reason other than the ones below. */
  static final int CHECK_FAILED = 1;
  /** {@code pglock leader}: nobody leads the election now. */
  static final int NO_LEADER = 1;
  /** {@code pglock members}: nobody is in the group now. */
  static final int NO_MEMBERS = 1;
  /** {@code pglock tasks}: no task is registered in the namespace, or not the one named. */
  static final int NO_TASK = 1;
  /**
   * {@code pglock jobs}: no jobs (in the queue named), no such job, or the action asked does not apply
   * to the job's state (the line printed says which state it is in and what applies instead).
   */
  static final int NO_JOB = 1;
  /** Bad options: picocli's usage error code, kept so that it means the same here. */
  static final int USAGE = 2;
  /**
   * The database could not be reached: unreachable, refused the login, or the embedded PostgreSQL
   * did not start. Nothing was checked.
   */
  static final int UNREACHABLE = 3;
  /**
   * {@code pglock run}: the lock was lost while the command ran (the command was told with SIGTERM,
   * then SIGKILL after the grace period). The command's own status is printed, not returned.
   */
  static final int LOCK_LOST = 4;
  /**
   * pglock's schema lacks what the command reads or needs ({@code pglock locks}, {@code pglock history},
   * {@code pglock run --fencing-token-env}): the line printed names {@code PgLockSchema.migrate} and the
   * migration file to apply. Nothing was read, and no command was run.
   */
  static final int SCHEMA_MISSING = 5;
  /**
   * The database role may not read what the command reads (SQLSTATE 42501, as for {@code pglock history}
   * when {@code <schema>.history} is not granted to it): the line printed names the GRANT to run.
   */
  static final int MISSING_PRIVILEGE = 6;
  /**
   * {@code pglock run}: the lock was not obtained (held by another, within the wait), unless
   * {@code --conflict-exit-code} says otherwise. 1, as {@code flock(1)} exits without {@code -E}.
   */
  static final int DEFAULT_CONFLICT = 1;
  /** {@code pglock run}: the command was found but could not be started, as shells report it. */
  static final int CANNOT_EXECUTE = 126;
  /** {@code pglock run}: the command was not found, as shells report it. */
  static final int NOT_FOUND = 127;
  /** A process ended by signal N exits with this plus N, as shells report it. */
  static final int SIGNAL_BASE = 128;

  private ExitCodes() {}
}
