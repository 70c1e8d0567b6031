package io.pglock.spring.boot;

import io.pglock.PgLockSchema;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;

/**
 * Applies pglock's migrations when the context starts, before any pglock bean that needs the
 * schema is created (they depend on this bean). Every node may run it: the migrator takes an
 * advisory lock, so each migration is applied once however many nodes start together.
 */
public final class SchemaMigration implements InitializingBean {
  private static final Logger log = LoggerFactory.getLogger(SchemaMigration.class);
  private final DataSource dataSource;
  private final String schema;
  private final boolean migrate;
  private volatile int version = -1;

  SchemaMigration(DataSource dataSource, String schema, boolean migrate) {
    this.dataSource = dataSource;
    this.schema = schema;
    this.migrate = migrate;
  }

  @Override
  public void afterPropertiesSet() {
    if (!migrate) {
      log.info("pglock: pglock.schema.migrate=false, the schema \"{}\" is left as it is", schema);
      return;
    }
    version = PgLockSchema.migrate(dataSource, schema);
    log.info("pglock: schema \"{}\" at version {}", schema, version);
  }

  /** {@return the schema's name} */
  public String schema() {
    return schema;
  }

  /** {@return the version this bean migrated to, or -1 if it did not migrate} */
  public int version() {
    return version;
  }
}
