/**
 * Scheduled methods across a fleet: {@link io.pglock.spring.scheduling.PgScheduled} (each slot once)
 * and {@link io.pglock.spring.scheduling.SchedulerLock} (ShedLock's annotation on pglock's locks).
 */
package io.pglock.spring.scheduling;
