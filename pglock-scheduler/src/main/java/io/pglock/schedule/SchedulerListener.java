package io.pglock.schedule;

/**
 * Hears how the runs of a {@link Scheduler} end, for metrics. Register one with
 * {@link SchedulerBuilder#listener(SchedulerListener)}; the module {@code pglock-micrometer} has one
 * that records Micrometer meters. Every method does nothing by default, so that an implementation
 * overrides only what it needs and keeps compiling when events are added.
 *
 * <p><b>Contract.</b> Methods are called on the scheduler's run threads, possibly from several at
 * once, so an implementation must be thread-safe. They must be quick (record a timer), must not
 * block and must not do I/O. An exception thrown by a method is caught and logged by the scheduler
 * (the first at WARN, the rest at DEBUG) and changes nothing in the run or its record.
 */
public interface SchedulerListener {

  /**
   * A run of a task ended on this node: its body returned or threw, its end was recorded (or the
   * recording failed) and the task's lock was released. Called once per run that started on a run
   * thread of this node; slots that were skipped, runs found disconnected (whose runner was another
   * process, or this one before a restart) and runs refused at close before they started are not
   * reported here: the run history ({@link TaskAdmin}) has them.
   *
   * @param namespace the namespace of the scheduler's {@link io.pglock.PgLocks}
   * @param task the task's name
   * @param kind why the run happened
   * @param outcome {@link RunState#SUCCEEDED}, {@link RunState#FAILED} or {@link RunState#INTERRUPTED}
   * @param durationNanos how long the task's body ran, by {@link System#nanoTime()}
   * @param latenessNanos how late the run started after its slot: the run row's {@code started_at}
   *     minus its slot, both by the database's clock (about 0 for a manual trigger; may be slightly
   *     negative if the clocks disagree)
   */
  default void runEnded(String namespace, String task, RunKind kind, RunState outcome, long durationNanos,
      long latenessNanos) {}
}
