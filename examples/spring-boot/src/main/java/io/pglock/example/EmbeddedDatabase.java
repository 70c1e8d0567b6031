package io.pglock.example;

import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The demo's database when no {@code spring.datasource.url} is given: an embedded PostgreSQL. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression("'${spring.datasource.url:}'.isEmpty()")
class EmbeddedDatabase {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedDatabase.class);

  @Bean(destroyMethod = "close")
  EmbeddedPostgres embeddedPostgres() throws IOException {
    EmbeddedPostgres pg = EmbeddedPostgres.builder().start();
    log.info("no spring.datasource.url: started an embedded PostgreSQL at {}", pg.getJdbcUrl("postgres", "postgres"));
    return pg;
  }

  @Bean(destroyMethod = "close")
  HikariDataSource dataSource(EmbeddedPostgres pg) {
    HikariDataSource pool = new HikariDataSource();
    pool.setJdbcUrl(pg.getJdbcUrl("postgres", "postgres"));
    pool.setMaximumPoolSize(12);
    return pool;
  }
}
