package io.pglock.dashboard.internal;

import io.pglock.dashboard.DashboardAction;
import io.pglock.queue.JobState;
import java.util.EnumSet;
import java.util.Set;

/** Which job states each job action applies to, as {@code JobAdmin} defines them. */
public final class JobActions {
  private JobActions() {}

  /** {@return the states a job action applies to (none for an action that is not on jobs)} */
  public static Set<JobState> states(DashboardAction action) {
    return switch (action) {
      case JOB_RETRY -> EnumSet.of(JobState.DISCARDED, JobState.CANCELLED);
      case JOB_DISCARD -> EnumSet.of(JobState.AVAILABLE, JobState.RETRYABLE);
      case JOB_CANCEL -> EnumSet.of(JobState.AVAILABLE, JobState.RETRYABLE, JobState.RUNNING);
      case JOB_DELETE -> EnumSet.of(JobState.SUCCEEDED, JobState.DISCARDED, JobState.CANCELLED);
      default -> EnumSet.noneOf(JobState.class);
    };
  }

  /** {@return true if a job action applies to a job in a state} */
  public static boolean appliesTo(String actionId, JobState state) {
    return DashboardAction.ofId(actionId).map(a -> states(a).contains(state)).orElse(false);
  }
}
