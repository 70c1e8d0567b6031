package io.pglock.schedule.internal;

import java.time.Instant;

/**
 * What a run thread tells the loop when a run is over (its end recorded, its lock released): the
 * loop applies it to the task's {@link TaskState}, which only the loop touches.
 *
 * @param task the run's task
 * @param run the run
 * @param at when it ended: its row's {@code finished_at}, or this node's estimate of the database's
 *     clock if it recorded no end
 */
record RunEnded(TaskState task, RunExecution run, Instant at) {}
