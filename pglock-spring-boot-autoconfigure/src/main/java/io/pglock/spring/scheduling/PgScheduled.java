package io.pglock.spring.scheduling;

import io.pglock.schedule.MissedSlots;
import io.pglock.schedule.Overlap;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a bean method as a pglock singleton task: each slot of its schedule runs once across the
 * fleet, on whichever node claims it first (a unique run row in the database decides, with slots
 * computed from the database's clock). Every node that has the bean registers the task; set exactly
 * one of {@link #cron()}, {@link #fixedRate()} and {@link #fixedDelay()}.
 *
 * <p>The method takes no parameter, or one {@link io.pglock.schedule.RunContext}: its slot,
 * attempt, deadline and fencing token (pass the token to whatever the run writes, so that a stale
 * run's writes can be refused). A thrown exception records the run as failed, with its error.
 *
 * <pre>{@code
 * @PgScheduled(cron = "0 30 2 * * *", zone = "Europe/Paris")
 * void nightlyReport(RunContext run) { reports.build(run.slot(), run.fencingToken()); }
 * }</pre>
 *
 * <p>Text attributes accept {@code ${...}} placeholders; durations are ISO-8601 ({@code PT30S}) or
 * Boot's simple form ({@code 30s}, {@code 5m}).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
public @interface PgScheduled {
  /**
   * The task's name, the same on every node: 1 to 100 letters, digits, '.', '_' or '-'. Default:
   * the class's simple name and the method's, as {@code ReportJobs.nightlyReport}.
   *
   * @return the name, or empty for the default
   */
  String name() default "";

  /** {@return a six-field cron expression in Spring's format ({@code "0 *&#47;5 * * * *"}), or empty} */
  String cron() default "";

  /** {@return the zone the cron fields are read in (default UTC), such as {@code Europe/Paris}} */
  String zone() default "";

  /** {@return a slot every this long, aligned on the epoch (every node computes the same slots), or empty} */
  String fixedRate() default "";

  /** {@return a slot this long after the previous run ended, whichever node ran it, or empty} */
  String fixedDelay() default "";

  /** {@return what to do with slots missed while no node ran (default: skip them)} */
  MissedSlots missedSlots() default MissedSlots.SKIP;

  /** {@return how late a slot may still run as scheduled (see Task.Builder#missedAfter), or empty for the default} */
  String missedAfter() default "";

  /** {@return what to do with a slot that comes while the previous run goes on (default: skip it)} */
  Overlap overlap() default Overlap.SKIP;

  /** {@return how long a run may take before its thread is interrupted, or empty for none} */
  String deadline() default "";

  /**
   * {@return attempts a slot gets in all when its runner disconnects mid-run (a node that died): the
   * next attempt runs on the node that notices; default 1, not run again}
   */
  int retryDisconnected() default 1;
}
