package io.pglock.spring.boot;

import io.pglock.PgLocks;
import io.pglock.spring.health.Boot3PgLockHealthIndicator;
import io.pglock.spring.health.Boot4PgLockHealthIndicator;
import io.pglock.spring.health.HealthDetails;
import io.pglock.spring.health.PgLockHealth;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * pglock's health: {@link PgLockHealth} always (usable without Actuator), and a health indicator
 * named {@code pglock} for whichever Actuator is present, Boot 4's or Boot 3's.
 */
@AutoConfiguration(after = {PgLockAutoConfiguration.class, PgLockSchedulerAutoConfiguration.class,
    PgLockQueueAutoConfiguration.class})
@ConditionalOnBean(PgLocks.class)
public class PgLockHealthAutoConfiguration {

  /** Creates the auto-configuration (Spring calls it). */
  public PgLockHealthAutoConfiguration() {}

  /**
   * The check, with the details of every pglock bean that adds some.
   *
   * @param locks the node's instance
   * @param details the beans that add details
   * @return the check
   */
  @Bean
  @ConditionalOnMissingBean
  public PgLockHealth pgLockHealth(PgLocks locks, ObjectProvider<HealthDetails> details) {
    return new PgLockHealth(locks, d -> details.orderedStream().forEach(h -> h.addHealthDetails(d)));
  }

  /** Boot 4's health API (org.springframework.boot.health.contributor). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
  static class Boot4 {
    @Bean
    @ConditionalOnMissingBean(name = "pglockHealthIndicator")
    Boot4PgLockHealthIndicator pglockHealthIndicator(PgLockHealth health) {
      return new Boot4PgLockHealthIndicator(health);
    }
  }

  /** Boot 3's health API (org.springframework.boot.actuate.health), when Boot 4's is absent. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
  @ConditionalOnMissingClass("org.springframework.boot.health.contributor.HealthIndicator")
  static class Boot3 {
    @Bean
    @ConditionalOnMissingBean(name = "pglockHealthIndicator")
    Boot3PgLockHealthIndicator pglockHealthIndicator(PgLockHealth health) {
      return new Boot3PgLockHealthIndicator(health);
    }
  }
}
