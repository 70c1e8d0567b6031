package io.pglock.spring.boot;

import io.pglock.PgLocks;
import io.pglock.spring.integration.PgLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * A Spring Integration {@link LockRegistry} on pglock when Spring Integration is on the class path
 * and the application defines none: {@code LockRegistryLeaderInitiator} and aggregators use it.
 */
@AutoConfiguration(after = PgLockAutoConfiguration.class)
@ConditionalOnClass(LockRegistry.class)
@ConditionalOnBean(PgLocks.class)
public class PgLockIntegrationAutoConfiguration {

  /** Creates the auto-configuration (Spring calls it). */
  public PgLockIntegrationAutoConfiguration() {}

  /**
   * The registry.
   *
   * @param locks the node's instance
   * @return the registry, region {@code DEFAULT}
   */
  @Bean
  @ConditionalOnMissingBean(LockRegistry.class)
  public PgLockRegistry pgLockRegistry(PgLocks locks) {
    return new PgLockRegistry(locks);
  }
}
