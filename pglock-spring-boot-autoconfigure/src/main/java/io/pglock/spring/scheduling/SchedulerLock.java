package io.pglock.spring.scheduling;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * ShedLock's annotation, on pglock: a method with it runs on one node at a time; a node that
 * finds the lock taken skips the call (returns {@code null}, or nothing for {@code void}). A
 * ShedLock user removes the {@code LockProvider} bean and {@code @EnableSchedulerLock}, and either
 * keeps ShedLock's own annotation (the starter honours it while shedlock-spring is on the class
 * path) or changes its import from {@code net.javacrumbs.shedlock.spring.annotation} to
 * {@code io.pglock.spring.scheduling}; the {@code @Scheduled} method stays as it is.
 *
 * <p>What changes: the lock is a session advisory lock, released when the method returns (or
 * after {@link #lockAtLeastFor()}) and, if the node dies, when its connection closes; so
 * {@link #lockAtMostFor()} is no longer needed to recover from a dead node, and a call that runs
 * longer than it keeps the lock (ShedLock would let another node start a second run). For a
 * guarantee per slot (each run of a cron schedule once in the fleet, even when a node's clock or
 * its {@code @Scheduled} timer is off), use {@link PgScheduled} instead.
 *
 * <p>Names and durations accept {@code ${...}} placeholders; durations are ISO-8601
 * ({@code PT30S}) or Boot's simple form ({@code 30s}, {@code 5m}).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
public @interface SchedulerLock {
  /** {@return the lock's name in the node's namespace: the same on every node that runs the method} */
  String name();

  /**
   * Accepted for ShedLock compatibility and checked (it must parse), but pglock does not need it:
   * a dead node's lock goes with its connection. Empty: not set.
   *
   * @return a duration, or empty
   */
  String lockAtMostFor() default "";

  /**
   * Keeps the lock at least this long after the call started, so that a node whose timer fires a
   * little later does not run the same scheduled call again. Empty: released when the call returns.
   *
   * @return a duration, or empty
   */
  String lockAtLeastFor() default "";
}
