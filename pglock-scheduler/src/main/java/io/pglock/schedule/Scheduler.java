package io.pglock.schedule;

import io.pglock.PgLocks;
import java.util.List;

/**
 * Singleton scheduled tasks across a fleet: every node registers the same tasks, and each slot of
 * a task runs once, on one node, whatever the nodes' clocks, restarts and crashes do.
 *
 * <pre>{@code
 * PgLockSchema.migrate(dataSource, "pglock");            // once: version 8 adds the task tables
 * PgLocks locks = PgLocks.builder(dataSource).namespace("billing").build();
 * Scheduler scheduler = Scheduler.builder(locks).build();
 * scheduler.register(Task.builder("nightly-report", Schedule.cron("0 30 2 * * *", ZoneId.of("Europe/Paris")))
 *     .missedSlots(MissedSlots.RUN_ONCE)
 *     .build(ctx -> reports.build(ctx.slot())));
 * scheduler.start();
 * ...
 * scheduler.close();                                     // lets running tasks finish, up to closeTimeout
 * }</pre>
 *
 * <p><b>How</b>: a slot runs on the node that inserts its row in {@code <schema>.task_run}, unique
 * per (namespace, task, slot), while holding the task's fenced session lock {@code "task:<name>"};
 * the insert succeeds only once the slot's time has come by the database's clock. Nodes wake at
 * the slot (their clock corrected by the measured offset to the database's) and race for it; the
 * others find the row and move on. A runner that dies mid-run leaves a running row whose task lock
 * is free: another node notices (within the sweep interval), records when, and retries the slot
 * if the task says so. See {@code docs/scheduling.md} for the guarantee and its limits.
 *
 * <p>Thread-safe. {@link #register}, {@link #pause}, {@link #resume}, {@link #trigger},
 * {@link #tasks} and {@link #runs} wait for the network (bounded by the network timeout); the
 * scheduler's own work runs on its threads.
 */
public interface Scheduler extends AutoCloseable {

  /**
   * Settings for a scheduler on these locks (their namespace, node name and data source).
   *
   * @param locks the node's locks
   * @return a builder
   */
  static SchedulerBuilder builder(PgLocks locks) {
    return new SchedulerBuilder(locks);
  }

  /**
   * Registers a task on this node (before or after {@link #start()}): records it in
   * {@code <schema>.scheduled_task} if it is new there. Every node that registers a task of the
   * same name shares its slots; give them the same schedule.
   *
   * @param task the task
   * @return this scheduler
   * @throws IllegalStateException if a task of this name is registered already, or the scheduler is closed
   * @throws io.pglock.SchemaMissingException if the schema lacks the task tables (version 8)
   * @throws io.pglock.LockSessionException if the database cannot be reached
   */
  Scheduler register(Task task);

  /**
   * Starts the scheduler's thread: slots are claimed from now on. Idempotent. Checks first that the
   * task tables are there (one statement).
   *
   * @throws io.pglock.SchemaMissingException if the schema lacks the task tables (version 8)
   * @throws io.pglock.LockSessionException if the database cannot be reached
   */
  void start();

  /**
   * Pauses a task on every node: no slot starts until {@link #resume}; the slots that pass
   * meanwhile are missed (the task's {@link MissedSlots} policy decides). A run in progress goes on.
   *
   * @param task the task's name
   * @throws IllegalArgumentException if no such task is registered in the namespace
   */
  void pause(String task);

  /**
   * Resumes a paused task on every node.
   *
   * @param task the task's name
   * @throws IllegalArgumentException if no such task is registered in the namespace
   */
  void resume(String task);

  /**
   * Runs a task once now, on one node (a {@link RunKind#MANUAL} run; after the current run if one
   * is going), paused or not.
   *
   * @param task the task's name
   * @throws IllegalArgumentException if no such task is registered in the namespace
   */
  void trigger(String task);

  /** {@return every task of the namespace, as the database knows it, with its latest runs} */
  List<TaskStatus> tasks();

  /**
   * A task's latest runs, newest first.
   *
   * @param task the task's name
   * @param limit how many, 1 to 10000
   * @return the runs
   */
  List<TaskRun> runs(String task, int limit);

  /**
   * Stops claiming slots, waits for runs in progress up to {@link SchedulerBuilder#closeTimeout},
   * then interrupts those still going and records them as interrupted. Idempotent; never throws.
   * Does not close the {@code PgLocks}: close the scheduler first.
   */
  @Override
  void close();
}
