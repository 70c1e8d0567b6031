package io.pglock.spring.boot;

import io.pglock.PgLocks;
import io.pglock.PgLocksBuilder;
import io.pglock.spring.leader.LeaderOnlyProcessor;
import io.pglock.spring.scheduling.SchedulerLockAdvisor;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;

/**
 * Auto-configuration of {@link PgLocks} from the application's {@link DataSource} (the HikariCP
 * pool Boot creates), after the DataSource and the application's own Flyway or Liquibase
 * migrations. Every bean backs off when the application defines its own.
 *
 * <p>Order at shutdown: the context first stops its lifecycles, highest phase first (the
 * application's own ownership and election beans, leader-only beans and their elections, then queue
 * workers, then the scheduler: see {@link PgLockPhases}), within
 * Boot's graceful-shutdown phase timeout; then it destroys beans, and {@link PgLocks} is closed
 * last because every other pglock bean depends on it.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
    "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    "org.springframework.boot.autoconfigure.flyway.FlywayAutoConfiguration",
    "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
    "org.springframework.boot.autoconfigure.liquibase.LiquibaseAutoConfiguration",
    "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration"})
@ConditionalOnClass(PgLocks.class)
@ConditionalOnBean(DataSource.class)
@ConditionalOnProperty(prefix = "pglock", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(PgLockProperties.class)
public class PgLockAutoConfiguration {

  /** Creates the auto-configuration (Spring calls it). */
  public PgLockAutoConfiguration() {}

  /**
   * When the application migrates with Flyway, pglock's migrations go through Flyway too, with the
   * application's Flyway settings and a history table of their own ({@link FlywaySchemaMigration}).
   */
  @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.flywaydb.core.Flyway")
  @ConditionalOnBean(type = "org.flywaydb.core.Flyway")
  @ConditionalOnProperty(prefix = "pglock.schema", name = "through-flyway", matchIfMissing = true)
  static class ThroughFlyway {
    @Bean
    @ConditionalOnMissingBean
    SchemaMigration pgLockSchemaMigration(org.flywaydb.core.Flyway flyway, PgLockProperties properties) {
      return new SchemaMigration(properties.getSchema().getName(), properties.getSchema().isMigrate(), "Flyway",
          schema -> FlywaySchemaMigration.migrate(flyway, schema));
    }
  }

  /**
   * When the application migrates with Liquibase, pglock's migrator runs with Liquibase's
   * DataSource (its user, which may be the only one allowed DDL), after the application's changelog.
   * pglock's files are not a Liquibase changelog: they keep their own version table.
   */
  @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "liquibase.integration.spring.SpringLiquibase")
  @ConditionalOnBean(type = "liquibase.integration.spring.SpringLiquibase")
  @ConditionalOnMissingBean(type = "org.flywaydb.core.Flyway")
  static class WithLiquibasesDataSource {
    @Bean
    @ConditionalOnMissingBean
    SchemaMigration pgLockSchemaMigration(liquibase.integration.spring.SpringLiquibase liquibase,
        PgLockProperties properties) {
      DataSource ds = liquibase.getDataSource();
      return new SchemaMigration(properties.getSchema().getName(), properties.getSchema().isMigrate(),
          "pglock's migrator with Liquibase's DataSource", schema -> io.pglock.PgLockSchema.migrate(ds, schema));
    }
  }

  /**
   * Applies pglock's migrations at start unless {@code pglock.schema.migrate=false}.
   *
   * @param dataSource the application's DataSource
   * @param properties pglock's settings
   * @return the migration bean
   */
  @Bean
  @ConditionalOnMissingBean
  public SchemaMigration pgLockSchemaMigration(DataSource dataSource, PgLockProperties properties) {
    return new SchemaMigration(dataSource, properties.getSchema().getName(), properties.getSchema().isMigrate());
  }

  /**
   * The node's {@link PgLocks}, closed when the context closes, after every pglock bean that uses it.
   *
   * @param dataSource the application's DataSource
   * @param properties pglock's settings
   * @param environment for {@code spring.application.name}, the default namespace
   * @param migration applied first
   * @param customizers applied after the properties
   * @return the running instance
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public PgLocks pgLocks(DataSource dataSource, PgLockProperties properties, Environment environment,
      SchemaMigration migration, ObjectProvider<PgLocksBuilderCustomizer> customizers) {
    PgLocksBuilder b = PgLocks.builder(dataSource);
    String namespace = StringUtils.hasText(properties.getNamespace()) ? properties.getNamespace()
        : environment.getProperty("spring.application.name");
    if (StringUtils.hasText(namespace)) {
      b.namespace(namespace);
    }
    if (StringUtils.hasText(properties.getNodeName())) {
      b.nodeName(properties.getNodeName());
    }
    if (properties.getLease() != null) {
      b.lease(properties.getLease());
    }
    if (properties.getConnectTimeout() != null) {
      b.connectTimeout(properties.getConnectTimeout());
    }
    if (properties.getLockSessions() != null) {
      b.lockSessions(properties.getLockSessions());
    }
    if (properties.getWaitSessions() != null) {
      b.waitSessions(properties.getWaitSessions());
    }
    if (properties.getMaxHeldLocks() != null) {
      b.maxHeldLocks(properties.getMaxHeldLocks());
    }
    b.schema(migration.schema());
    if (properties.isFencing()) {
      b.fencing();
    }
    if (properties.isHistory()) {
      b.history();
    }
    customizers.orderedStream().forEach(c -> c.customize(b));
    return b.build();
  }

  /**
   * Warns at start when the pool leaves the application too few connections.
   *
   * @param locks the node's instance
   * @param budgets what each pglock component keeps borrowed
   * @return the check
   */
  @Bean
  static PoolSizeReport pgLockPoolSizeReport(PgLocks locks, ObjectProvider<ConnectionBudget> budgets) {
    return new PoolSizeReport(locks, budgets);
  }

  /**
   * Gives methods annotated {@link io.pglock.spring.scheduling.SchedulerLock} (ShedLock's
   * annotation, pglock's lock) their lock.
   *
   * @param locks the node's instance, looked up when the first annotated method runs
   * @return the post-processor
   */
  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static SchedulerLockAdvisor pgLockSchedulerLockAdvisor(ObjectProvider<PgLocks> locks) {
    return new SchedulerLockAdvisor(locks);
  }

  /**
   * Closes the application's own ownership, election and membership beans first at shutdown.
   *
   * @param ownerships the application's ownership beans
   * @param elections the application's election beans
   * @param memberships the application's membership beans
   * @return the lifecycle
   */
  @Bean
  @ConditionalOnMissingBean
  public CoordinationShutdown pgLockCoordinationShutdown(ObjectProvider<io.pglock.ownership.Ownership> ownerships,
      ObjectProvider<io.pglock.election.LeaderElection> elections,
      ObjectProvider<io.pglock.election.Membership> memberships) {
    return new CoordinationShutdown(ownerships, elections, memberships);
  }

  /**
   * Starts beans annotated {@link io.pglock.spring.leader.LeaderOnly} while this node leads their
   * election, and stops them when it does not.
   *
   * @param locks the node's instance
   * @return the processor
   */
  @Bean
  @ConditionalOnMissingBean
  static LeaderOnlyProcessor pgLockLeaderOnlyProcessor(ObjectProvider<PgLocks> locks) {
    return new LeaderOnlyProcessor(locks);
  }
}
