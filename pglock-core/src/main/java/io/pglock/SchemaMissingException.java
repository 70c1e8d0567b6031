package io.pglock;

/**
 * A capability needs pglock's database objects, and the schema lacks them (or is not there). The
 * message names the schema, the version needed and how to install it: {@link PgLockSchema#migrate},
 * or the migration files for Flyway or Liquibase.
 */
public class SchemaMissingException extends PgLockException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with the message given.
   *
   * @param message what is missing, and how to install it
   */
  public SchemaMissingException(String message) {
    super(message, null);
  }
}
