/**
 * Spring Boot auto-configuration of pglock: {@link io.pglock.PgLocks} from the application's
 * DataSource, the scheduler and the job queue when their modules are present, health, the web
 * dashboard when enabled, and the {@code pglock.*} properties
 * ({@link io.pglock.spring.boot.PgLockProperties}).
 */
package io.pglock.spring.boot;
