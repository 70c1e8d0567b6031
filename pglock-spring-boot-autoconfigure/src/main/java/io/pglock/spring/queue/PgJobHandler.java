package io.pglock.spring.queue;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Registers a bean method as the handler of a job kind: the starter runs a worker for each queue
 * that has handlers (settings under {@code pglock.queue.worker.*}, per queue under
 * {@code pglock.queue.queues.<name>.*}) from the context's start to its stop.
 *
 * <p>The method's first parameter is the payload: its type is what the job's JSON is read into
 * (a record, a class, a {@code Map}, or {@code String} for the raw JSON text). A second parameter of type
 * {@link io.pglock.queue.JobContext} gives the attempt, cancellation and ownership. Return normally
 * for success; throw to fail the attempt (retried with backoff until its attempts run out), or
 * {@link io.pglock.queue.DiscardJobException} to give up at once.
 *
 * <p>A last parameter of type {@link java.sql.Connection} makes the method's database work exactly
 * once: it runs in a transaction on that connection, and the worker records the job's success in the
 * same transaction and commits it, only while this attempt still owns the job
 * ({@link io.pglock.queue.TransactionalJobHandler}). Write through that connection (for a
 * {@code JdbcTemplate}: {@code new JdbcTemplate(new SingleConnectionDataSource(tx, true))}); do not
 * commit it.
 *
 * <pre>{@code
 * @PgJobHandler(kind = "send-invoice")
 * void send(InvoiceRequest request, JobContext job) { mailer.send(request); }
 *
 * @PgJobHandler(kind = "charge")
 * void charge(Charge charge, Connection tx) throws SQLException { ... } // commits with the job's success
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
public @interface PgJobHandler {
  /** {@return the job kind this method handles: one handler per kind and queue} */
  String kind();

  /** {@return the queue the jobs are taken from (default {@code "default"})} */
  String queue() default "default";

  /** {@return attempts in all for jobs of this kind that set none, or 0 for the worker's default} */
  int maxAttempts() default 0;
}
