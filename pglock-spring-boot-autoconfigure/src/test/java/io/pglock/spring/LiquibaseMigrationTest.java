package io.pglock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.pglock.PgLockSchema;
import io.pglock.spring.boot.PgLockAutoConfiguration;
import io.pglock.spring.boot.SchemaMigration;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.OwnedBackends;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;
import liquibase.integration.spring.SpringLiquibase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

/** An application that migrates with Liquibase: pglock's migrator runs with Liquibase's DataSource. */
@ExtendWith(NoLeakedLocks.class)
class LiquibaseMigrationTest {
  private final String schema = "pglock_lb_" + UUID.randomUUID().toString().substring(0, 8);

  @Configuration(proxyBeanMethods = false)
  static class AppWithLiquibase {
    @Bean(destroyMethod = "close")
    HikariDataSource dataSource() {
      HikariDataSource pool = new HikariDataSource();
      pool.setDataSource(OwnedBackends.recording(TestDatabase.get().dataSource("liquibase-pool")));
      pool.setMaximumPoolSize(10);
      pool.setMinimumIdle(0);
      return pool;
    }

    @Bean
    SpringLiquibase liquibase(DataSource dataSource) {
      SpringLiquibase liquibase = new SpringLiquibase();
      liquibase.setDataSource(dataSource);
      liquibase.setChangeLog("classpath:db/changelog/app.xml");
      return liquibase;
    }
  }

  @AfterEach
  void dropSchema() throws SQLException {
    try (Connection c = TestDatabase.get().connect(); Statement st = c.createStatement()) {
      st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }

  @Test
  void pglocksMigratorRunsWithLiquibasesDataSource() {
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PgLockAutoConfiguration.class))
        .withUserConfiguration(AppWithLiquibase.class)
        .withPropertyValues("pglock.namespace=" + SpringFleet.namespace("liquibase"), "pglock.schema.name=" + schema)
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(SchemaMigration.class).through()).contains("Liquibase");
          assertThat(new JdbcTemplate(context.getBean(DataSource.class))
              .queryForObject("SELECT max(version) FROM " + schema + ".schema_version", Integer.class))
              .isEqualTo(PgLockSchema.latestVersion());
        });
  }
}
