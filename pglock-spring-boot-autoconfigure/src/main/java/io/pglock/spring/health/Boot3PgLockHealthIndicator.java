package io.pglock.spring.health;

import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/** {@link PgLockHealth} as a Spring Boot 3 Actuator health indicator (component {@code pglock}). */
public final class Boot3PgLockHealthIndicator implements HealthIndicator {
  private final PgLockHealth health;

  /**
   * Creates the indicator.
   *
   * @param health the check
   */
  public Boot3PgLockHealthIndicator(PgLockHealth health) {
    this.health = health;
  }

  @Override
  public Health health() {
    PgLockHealth.Result r = health.check();
    return (r.up() ? Health.up() : Health.down()).withDetails(r.details()).build();
  }
}
