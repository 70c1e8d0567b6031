package io.pglock.spring.health;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/** {@link PgLockHealth} as a Spring Boot 4 health indicator (component {@code pglock}). */
public final class Boot4PgLockHealthIndicator implements HealthIndicator {
  private final PgLockHealth health;

  /**
   * Creates the indicator.
   *
   * @param health the check
   */
  public Boot4PgLockHealthIndicator(PgLockHealth health) {
    this.health = health;
  }

  @Override
  public Health health() {
    PgLockHealth.Result r = health.check();
    return (r.up() ? Health.up() : Health.down()).withDetails(r.details()).build();
  }
}
