package io.pglock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.pglock.PgLockSchema;
import io.pglock.schedule.Schedule;
import io.pglock.schedule.Scheduler;
import io.pglock.schedule.Task;
import io.pglock.spring.boot.PgLockAutoConfiguration;
import io.pglock.spring.boot.PgLockSchedulerAutoConfiguration;
import io.pglock.spring.boot.SchemaMigration;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.OwnedBackends;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * An application that migrates with Flyway gets pglock's migrations through Flyway, in a history
 * table of their own, and a schema pglock's migrator made earlier is taken over, not re-applied.
 */
@ExtendWith(NoLeakedLocks.class)
class FlywayMigrationTest {
  private final String schema = "pglock_fw_" + UUID.randomUUID().toString().substring(0, 8);

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(PgLockAutoConfiguration.class, PgLockSchedulerAutoConfiguration.class))
      .withUserConfiguration(AppWithFlyway.class)
      .withPropertyValues("pglock.namespace=" + SpringFleet.namespace("flyway"), "pglock.schema.name=" + schema);

  @Configuration(proxyBeanMethods = false)
  static class AppWithFlyway {
    @Bean(destroyMethod = "close")
    HikariDataSource dataSource() {
      HikariDataSource pool = new HikariDataSource();
      pool.setDataSource(OwnedBackends.recording(TestDatabase.get().dataSource("flyway-pool")));
      pool.setMaximumPoolSize(10);
      pool.setMinimumIdle(0);
      return pool;
    }

    @Bean
    Flyway flyway(DataSource dataSource) {
      // the application's own Flyway: its migrations would be under db/migration; it has none here
      return Flyway.configure().dataSource(dataSource).locations("classpath:db/none").load();
    }
  }

  @AfterEach
  void dropSchema() throws SQLException {
    try (Connection c = TestDatabase.get().connect(); Statement st = c.createStatement()) {
      st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }

  @Test
  void pglocksMigrationsGoThroughTheApplicationsFlyway() {
    runner.run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(context.getBean(SchemaMigration.class).through()).isEqualTo("Flyway");
      JdbcTemplate sql = new JdbcTemplate(context.getBean(DataSource.class));
      assertThat(sql.queryForObject("SELECT count(*) FROM " + schema + ".flyway_pglock_history WHERE success AND version IS NOT NULL",
          Integer.class)).isEqualTo(PgLockSchema.latestVersion());
      assertThat(sql.queryForObject("SELECT max(version) FROM " + schema + ".schema_version", Integer.class))
          .isEqualTo(PgLockSchema.latestVersion());
      // the scheduler's tables are there: a task registers
      context.getBean(Scheduler.class).register(Task.builder("flyway-check", Schedule.fixedRate(Duration.ofHours(1)))
          .build(run -> {}));
    });
  }

  @Test
  void aSchemaMadeByPglocksMigratorIsTakenOverAsABaseline() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), schema);
    runner.run(context -> {
      assertThat(context).hasNotFailed();
      JdbcTemplate sql = new JdbcTemplate(context.getBean(DataSource.class));
      assertThat(sql.queryForObject("SELECT type FROM " + schema + ".flyway_pglock_history WHERE version = ?",
          String.class, String.valueOf(PgLockSchema.latestVersion()))).isEqualTo("BASELINE");
    });
    // and pglock's own migrator, on a node without Flyway, finds nothing to do
    assertThat(PgLockSchema.migrate(TestDatabase.get().dataSource(), schema)).isEqualTo(PgLockSchema.latestVersion());
  }
}
