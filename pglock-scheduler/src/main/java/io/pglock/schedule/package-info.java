/**
 * Singleton scheduled tasks: {@link io.pglock.schedule.Scheduler} runs each slot of each
 * {@link io.pglock.schedule.Task} once across the fleet ({@link io.pglock.schedule.Schedule}: cron,
 * fixed rate, fixed delay), with policies for missed slots ({@link io.pglock.schedule.MissedSlots}),
 * overlapping runs ({@link io.pglock.schedule.Overlap}) and disconnected runners, and a run history
 * ({@link io.pglock.schedule.TaskRun}). {@link io.pglock.schedule.TaskAdmin} pauses, resumes and
 * triggers tasks from anywhere. See {@code docs/scheduling.md}.
 */
package io.pglock.schedule;
