/**
 * Micrometer meters for pglock, bound to the listener hooks of the core
 * ({@link io.pglock.PgLocksListener}), the scheduler ({@link io.pglock.schedule.SchedulerListener})
 * and the job queue ({@link io.pglock.queue.JobListener}); usable without Spring.
 *
 * <ul>
 *   <li>{@link io.pglock.micrometer.PgLocksMetrics}: lock acquires, held locks, sessions, lost
 *       locks, leadership ({@code pglock.locks.*}, {@code pglock.election.leader});
 *   <li>{@link io.pglock.micrometer.SchedulerMetrics}: task runs and their lateness
 *       ({@code pglock.task.*});
 *   <li>{@link io.pglock.micrometer.JobMetrics}: job attempts ({@code pglock.jobs.attempts});
 *   <li>{@link io.pglock.micrometer.QueueGauges}: jobs per queue and state, and the oldest due job's
 *       wait, read from the database in the background ({@code pglock.jobs}, {@code pglock.jobs.lag});
 *   <li>{@link io.pglock.micrometer.OpenTelemetryJobTracing}: not a meter but traces, bound to the
 *       queue's {@link io.pglock.queue.JobTracing} hook: a job carries the OpenTelemetry context of
 *       its enqueue, and each attempt runs in a span of that trace.
 * </ul>
 *
 * <p>Every tag is low-cardinality (namespace, election, task, queue, kind, mode and outcomes): never a
 * lock's name or a job's id. pglock-scheduler, pglock-queue and the OpenTelemetry API are optional
 * dependencies of this module: the classes for them need them on the class path. See
 * {@code docs/metrics.md} and {@code docs/tracing.md}.
 */
package io.pglock.micrometer;
