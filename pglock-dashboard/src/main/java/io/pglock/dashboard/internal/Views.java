package io.pglock.dashboard.internal;

import io.pglock.dashboard.internal.data.ActionLog;
import io.pglock.dashboard.internal.data.ElectionsData;
import io.pglock.dashboard.internal.data.JobFilter;
import io.pglock.dashboard.internal.data.JobsData;
import io.pglock.dashboard.internal.data.LocksData;
import io.pglock.dashboard.internal.data.NodesData;
import io.pglock.dashboard.internal.data.TasksData;
import io.pglock.dashboard.internal.view.Chart;
import io.pglock.queue.Job;
import java.util.List;

/** The models of the pages that need more than one list. */
public final class Views {
  private Views() {}

  /**
   * The overview.
   *
   * @param nodes nodes with pglock connections
   * @param elections elections and who leads them
   * @param queues figures per queue
   * @param throughput jobs finished per minute, every queue
   * @param troubledTasks tasks late or whose last run failed
   * @param losses holds that ended badly in the last hour
   * @param actions the latest operators' actions
   */
  public record Overview(List<NodesData.Node> nodes, List<ElectionsData.Election> elections,
      List<JobsData.QueueStats> queues, Chart throughput, List<TasksData.Task> troubledTasks,
      List<LocksData.HistoryRow> losses, List<ActionLog.Entry> actions) {}

  /**
   * The locks page.
   *
   * @param locks held and awaited
   * @param namespace the namespace filter, or ""
   * @param name the name filter, or ""
   * @param capped true if more locks exist than shown
   */
  public record Locks(List<LocksData.LockRow> locks, String namespace, String name, boolean capped) {}

  /**
   * The history page.
   *
   * @param rows the holds
   * @param failedOnly only failed, lost and disconnected
   * @param namespace the namespace filter, or ""
   * @param name the lock name filter, or ""
   * @param next the next page's cursor, or null
   */
  public record History(List<LocksData.HistoryRow> rows, boolean failedOnly, String namespace, String name,
      String next) {}

  /**
   * The tasks page.
   *
   * @param tasks the tasks
   * @param namespace the namespace filter, or ""
   */
  public record Tasks(List<TasksData.Task> tasks, String namespace) {}

  /**
   * One task's page.
   *
   * @param task the task
   * @param runs a page of its runs
   * @param lateness the lateness chart of its latest runs
   * @param next the next page's cursor, or null
   */
  public record TaskPage(TasksData.Task task, List<TasksData.Run> runs, Chart lateness, String next) {}

  /**
   * The queues page.
   *
   * @param queues figures per queue
   * @param charts per queue, jobs finished per minute
   */
  public record Queues(List<JobsData.QueueStats> queues, List<Chart> charts) {}

  /**
   * The jobs page.
   *
   * @param filter the filter
   * @param page the jobs
   * @param queues the queues to choose from
   * @param states the states to choose from
   * @param bulkCap the most jobs one bulk action changes
   */
  public record Jobs(JobFilter filter, JobsData.JobsPage page, List<String> queues, List<String> states,
      int bulkCap) {}

  /**
   * One job's page.
   *
   * @param job the job, its payload indented
   */
  public record JobPage(Job job) {
    /** {@return true if an action applies to the job in its state (its button is shown)} */
    public boolean offers(String actionId) {
      return JobActions.appliesTo(actionId, job.state());
    }
  }

  /**
   * The action log.
   *
   * @param entries recorded actions
   * @param next the next page's cursor, or null
   */
  public record Actions(List<ActionLog.Entry> entries, String next) {}
}
