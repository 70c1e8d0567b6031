package io.pglock.dashboard;

/**
 * What an operator can do in the dashboard; a {@link DashboardAuthorizer} decides who may do which.
 * Every action is a POST, checked against cross-site requests, and recorded in the table
 * {@code dashboard_action} whether it was allowed or not.
 */
public enum DashboardAction {
  /** Make a discarded or cancelled job available again. */
  JOB_RETRY("job.retry"),
  /** Discard an available or retryable job. */
  JOB_DISCARD("job.discard"),
  /** Cancel a waiting job, or ask a running one to stop. */
  JOB_CANCEL("job.cancel"),
  /** Delete a finished job. */
  JOB_DELETE("job.delete"),
  /** Run a task now, once, on whichever node takes it first. */
  TASK_TRIGGER("task.trigger"),
  /** Stop a task's slots from running until it is resumed. */
  TASK_PAUSE("task.pause"),
  /** Let a paused task's slots run again. */
  TASK_RESUME("task.resume");

  private final String id;

  DashboardAction(String id) {
    this.id = id;
  }

  /** {@return the action's name as recorded and as posted, such as {@code job.retry}} */
  public String id() {
    return id;
  }

  /**
   * {@return the action with a name, if any}
   *
   * @param id a name such as {@code job.retry}
   */
  public static java.util.Optional<DashboardAction> ofId(String id) {
    for (DashboardAction a : values()) {
      if (a.id.equals(id)) {
        return java.util.Optional.of(a);
      }
    }
    return java.util.Optional.empty();
  }
}
