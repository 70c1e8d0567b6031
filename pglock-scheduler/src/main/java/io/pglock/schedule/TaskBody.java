package io.pglock.schedule;

/** The code of a task: run once per slot, on one node. */
@FunctionalInterface
public interface TaskBody {

  /**
   * Runs one slot. Return normally for success; throw to record a failure (the error's class,
   * message and trimmed stack are kept in the run's row). Stop soon when interrupted: the run's
   * deadline passed, or this node lost the task's lock.
   *
   * @param context the slot, the run's fencing token and deadline
   * @throws Exception to record the run as failed
   */
  void run(RunContext context) throws Exception;
}
