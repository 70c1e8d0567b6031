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
  private final String schema;
  private final boolean migrate;
  private final String through;
  private final java.util.function.ToIntFunction<String> migrator;
  private volatile int version = -1;

  SchemaMigration(DataSource dataSource, String schema, boolean migrate) {
    this(schema, migrate, "pglock's migrator", s -> PgLockSchema.migrate(dataSource, s));
  }

  SchemaMigration(String schema, boolean migrate, String through, java.util.function.ToIntFunction<String> migrator) {
    this.schema = PgLockSchema.checkName(schema);
    this.migrate = migrate;
    this.through = through;
    this.migrator = migrator;
  }

  @Override
  public void afterPropertiesSet() {
    if (!migrate) {
      log.info("pglock: pglock.schema.migrate=false, the schema \"{}\" is left as it is", schema);
      return;
    }
    version = migrator.applyAsInt(schema);
    log.info("pglock: schema \"{}\" at version {} ({})", schema, version, through);
  }

  /** {@return the schema's name} */
  public String schema() {
    return schema;
  }

  /** {@return what applied the migrations: "pglock's migrator" or "Flyway"} */
  public String through() {
    return through;
  }

  /** {@return the version this bean migrated to, or -1 if it did not migrate} */
  public int version() {
    return version;
  }
}
