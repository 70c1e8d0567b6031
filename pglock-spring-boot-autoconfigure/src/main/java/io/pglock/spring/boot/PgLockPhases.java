package io.pglock.spring.boot;

import org.springframework.context.SmartLifecycle;

/**
 * The {@link SmartLifecycle} phases of pglock's components. A context stops the highest phase
 * first: the application's own ownership, election and membership beans, then leader-only beans and
 * their elections, then queue workers (which finish their running jobs
 * or give them back), then the scheduler; {@link io.pglock.PgLocks} is closed after all of them,
 * when its bean is destroyed. All run before the web server's graceful shutdown (Boot's phase
 * {@code DEFAULT_PHASE - 1024}), each within {@code spring.lifecycle.timeout-per-shutdown-phase}.
 */
public final class PgLockPhases {
  /** The application's own {@code Ownership}, {@code LeaderElection} and {@code Membership} beans: closed first. */
  public static final int OWNERSHIP = SmartLifecycle.DEFAULT_PHASE - 50;
  /** Leader-only beans and their elections. */
  public static final int ELECTIONS = SmartLifecycle.DEFAULT_PHASE - 100;
  /** Queue workers. */
  public static final int WORKERS = SmartLifecycle.DEFAULT_PHASE - 200;
  /** The scheduler. */
  public static final int SCHEDULER = SmartLifecycle.DEFAULT_PHASE - 300;

  private PgLockPhases() {}
}
