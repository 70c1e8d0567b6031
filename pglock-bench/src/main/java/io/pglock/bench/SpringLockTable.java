package io.pglock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Spring Integration's lock table for B8, {@code INT_LOCK} as Spring's own
 * {@code schema-postgresql.sql} (shipped in spring-integration-jdbc) defines it, created in a schema
 * of this run's own ({@code pglock_bench_b8_<pid>}) and dropped with it at the end.
 */
final class SpringLockTable implements AutoCloseable {
  static final String SCRIPT = "org/springframework/integration/jdbc/schema-postgresql.sql";
  private final Db db;
  private final String schema;

  private SpringLockTable(Db db, String schema) {
    this.db = db;
    this.schema = schema;
  }

  static SpringLockTable create(Db db) throws SQLException, IOException {
    String ddl = lockTableDdl();
    String schema = "pglock_bench_b8_" + ProcessHandle.current().pid();
    try (Connection c = db.connect(db.runPrefix + "-b8-setup"); Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
      s.execute("CREATE SCHEMA " + schema);
      s.execute(ddl.replaceFirst("(?i)CREATE TABLE INT_LOCK", "CREATE TABLE " + schema + ".INT_LOCK"));
    }
    return new SpringLockTable(db, schema);
  }

  /** The {@code CREATE TABLE INT_LOCK} statement of Spring's script. */
  static String lockTableDdl() throws IOException {
    try (InputStream in = SpringLockTable.class.getClassLoader().getResourceAsStream(SCRIPT)) {
      if (in == null) {
        throw new IOException(SCRIPT + " not on the class path");
      }
      String script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      Matcher m = Pattern.compile("(?is)CREATE TABLE INT_LOCK\\s*\\(.*?\\);").matcher(script);
      if (!m.find()) {
        throw new IOException("no CREATE TABLE INT_LOCK in " + SCRIPT);
      }
      String ddl = m.group();
      return ddl.substring(0, ddl.length() - 1); // without the ';'
    }
  }

  /** {@return the table prefix for DefaultLockRepository: the table is {@code <prefix>LOCK}} */
  String prefix() {
    return schema + ".INT_";
  }

  @Override
  public void close() throws SQLException {
    try (Connection c = db.connect(db.runPrefix + "-b8-setup"); Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }
}
