/**
 * The pglock schema's migrations: {@code SchemaMigrator} applies the versioned scripts
 * ({@code /io/pglock/schema/V<n>__*.sql} on the class path, loaded by absolute name) and checks a
 * schema name before it is put into SQL. Not API.
 *
 * <p>A package of its own because every module uses it ({@code PgLockSchema}, the builder, the
 * scheduler and the job queue) and none of it touches the lock engine: it needs only the database
 * check of {@code io.pglock.internal.SessionSetup} and {@code SqlErrors}.
 */
package io.pglock.internal.schema;
