/**
 * Job handlers as bean methods ({@link io.pglock.spring.queue.PgJobHandler}) and a job queue whose
 * enqueue joins the caller's Spring transaction ({@link io.pglock.spring.queue.SpringJobQueue}).
 */
package io.pglock.spring.queue;
