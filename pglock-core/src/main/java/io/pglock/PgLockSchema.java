package io.pglock;

import io.pglock.internal.schema.SchemaMigrator;
import javax.sql.DataSource;

/**
 * pglock's database objects: versioned migrations applied under an advisory lock, so that many
 * nodes starting at once apply each migration exactly once.
 *
 * <p>Version 1 creates the schema and the function {@code <schema>.key(namespace, name)}, the SQL
 * twin of {@link LockKey#named(String, String)}. Session and transaction locks need no database
 * objects at all; install the schema for the SQL function and for later capabilities.
 *
 * <p><b>Privileges</b>: migrating needs {@code CREATE} on the database (to create the schema) or an
 * existing schema the role may create objects in. Teams that manage schemas with Flyway or Liquibase
 * can apply the migration files instead: they are on the classpath under {@code io/pglock/schema/}
 * ({@code V1__key_function.sql}, ...), with a {@code ${schema}} placeholder both tools substitute.
 */
public final class PgLockSchema {
  /** The schema used when none is given. */
  public static final String DEFAULT_SCHEMA = "pglock";

  private PgLockSchema() {}

  /**
   * Applies the migrations the schema lacks, in one transaction, under an advisory lock.
   *
   * @param dataSource a data source for the database to migrate
   * @param schema a lower-case SQL identifier: letters, digits and '_', at most 63 characters
   * @return the schema's version afterwards
   * @throws IllegalArgumentException if the schema name is not such an identifier
   * @throws MissingPrivilegeException if the role may not create the schema or its objects
   * @throws UnsupportedDatabaseException if the database is not PostgreSQL 14 or newer
   * @throws LockSessionException if a statement fails for another reason
   */
  public static int migrate(DataSource dataSource, String schema) {
    return SchemaMigrator.migrate(dataSource, schema);
  }

  /**
   * Checks a schema name before it is used: pglock puts it in SQL text, so it must be a plain
   * identifier.
   *
   * @param schema the name
   * @return the name
   * @throws IllegalArgumentException if it is not a lower-case SQL identifier (letters, digits and
   *     '_', not starting with a digit, at most 63 characters), naming it
   */
  public static String checkName(String schema) {
    return SchemaMigrator.checkSchema(schema);
  }

  /** {@return the newest schema version this library knows} */
  public static int latestVersion() {
    return SchemaMigrator.latestVersion();
  }
}
