/**
 * A durable job queue on PostgreSQL: jobs are rows of {@code pglock.job}, enqueued in the caller's
 * transaction if need be, and worked by {@link io.pglock.queue.JobWorker}s that own each running job
 * through a session advisory lock, so that a crashed worker's jobs are free again at once.
 *
 * <pre>{@code
 * JobQueue jobs = JobQueue.builder(locks).build();
 * jobs.enqueue(JobRequest.of("send-welcome", new Welcome("ada@example.com")));
 *
 * JobWorker worker = jobs.worker("default")
 *     .concurrency(8)
 *     .handler("send-welcome", Welcome.class, (welcome, job) -> mailer.send(welcome))
 *     .start();
 * }</pre>
 *
 * <p>See {@code docs/queue.md} for the delivery guarantee (at least once), ordering, the two
 * claiming modes and table maintenance.
 */
package io.pglock.queue;
