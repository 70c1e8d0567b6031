package io.pglock.cli;

import io.pglock.LockKey;
import io.pglock.PgLockSchema;

/**
 * The SQL that names a lock's key, for people and scripts outside Java: through the function
 * {@code pglock.key} that {@link PgLockSchema#migrate} installs, through the same derivation
 * spelled out in built-in functions (no schema needed), and the plain 64-bit number.
 *
 * <p>Names are user input and end up in SQL text someone will paste into psql, so they are quoted
 * as standard SQL string literals (a {@code '} doubled). That is exact under
 * {@code standard_conforming_strings = on}, PostgreSQL's default since 9.1, where a backslash is
 * an ordinary character.
 */
final class KeySql {
  private KeySql() {}

  /** {@code SELECT pglock.key('ns', 'name')}: needs the pglock schema installed. */
  static String keyFunction(LockKey key) {
    return "SELECT " + PgLockSchema.DEFAULT_SCHEMA + ".key(" + literal(key.namespace()) + ", "
        + literal(key.name()) + ")";
  }

  /**
   * The key computed with built-in functions only: the first 8 bytes of SHA-256 over the UTF-8
   * bytes of {@code namespace:name}, read as a signed big-endian 64-bit integer, as
   * {@link LockKey#named} computes it.
   */
  static String builtIns(LockKey key) {
    return "SELECT ('x' || encode(substring(sha256(convert_to(" + literal(key.namespace()) + " || ':' || "
        + literal(key.name()) + ", 'UTF8')) FROM 1 FOR 8), 'hex'))::bit(64)::bigint";
  }

  /** {@code SELECT pg_advisory_lock(<key>)}, the call that takes the lock from psql. */
  static String lockCall(LockKey key, String function) {
    return "SELECT " + function + "(" + key.int64() + ")";
  }

  /** A standard SQL string literal: the text in single quotes, each single quote doubled. */
  static String literal(String text) {
    return "'" + text.replace("'", "''") + "'";
  }
}
