package io.pglock.internal;

import io.pglock.LockEntry;
import io.pglock.LockKey;
import io.pglock.LockMode;
import io.pglock.LockSessionException;
import io.pglock.SchemaMissingException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/** Reads {@code <schema>.locks} for {@link io.pglock.LockListing}. */
public final class LockListingQuery {
  private LockListingQuery() {}

  /** See {@link io.pglock.LockListing#list()}. */
  public static List<LockEntry> list(DataSource dataSource, String schema) {
    try (Connection c = dataSource.getConnection()) {
      if (!viewExists(c, schema)) {
        throw new SchemaMissingException("the view " + schema + ".locks is missing: it needs pglock's schema \""
            + schema + "\" at version 6 or later (and USAGE on it); run PgLockSchema.migrate(dataSource, \"" + schema + "\") once, or "
            + "apply the files under io/pglock/schema/ with Flyway or Liquibase");
      }
      try (PreparedStatement ps = c.prepareStatement(Sql.listLocks(schema)); ResultSet rs = ps.executeQuery()) {
        List<LockEntry> entries = new ArrayList<>();
        while (rs.next()) {
          entries.add(entry(rs));
        }
        return entries;
      }
    } catch (SQLException e) {
      throw new LockSessionException("could not list the database's advisory locks: " + SqlErrors.describe(e), e);
    }
  }

  private static boolean viewExists(Connection c, String schema) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(Sql.schemaHas("pg_class", "locks"))) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  /** The named key, or null if no name was recorded (or one pglock would refuse, recorded by hand). */
  private static LockKey named(String namespace, String name) {
    if (namespace == null || name == null) {
      return null;
    }
    try {
      return LockKey.named(namespace, name);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static LockEntry entry(ResultSet rs) throws SQLException {
    String namespace = rs.getString("namespace");
    String name = rs.getString("name");
    LockKey key = named(namespace, name);
    if (key == null) {
      key = rs.getInt("space") == 2 ? LockKey.of(rs.getInt("first"), rs.getInt("second")) : LockKey.of(rs.getLong("key"));
    }
    Timestamp since = rs.getTimestamp("since");
    List<Integer> blockedBy = new ArrayList<>();
    Array blocked = rs.getArray("blocked_by");
    if (blocked != null) {
      for (Integer pid : (Integer[]) blocked.getArray()) {
        blockedBy.add(pid);
      }
    }
    String app = rs.getString("application_name");
    return new LockEntry(key, "shared".equals(rs.getString("mode")) ? LockMode.SHARED : LockMode.EXCLUSIVE,
        rs.getBoolean("granted"), rs.getString("scope"), rs.getInt("pid"), Optional.ofNullable(rs.getString("node")),
        Optional.ofNullable(rs.getString("role")), app == null ? "" : app,
        Optional.ofNullable(rs.getString("client_addr")), Optional.ofNullable(rs.getString("username")),
        Optional.ofNullable(since).map(Timestamp::toInstant), List.copyOf(blockedBy),
        Optional.ofNullable(rs.getString("holder_namespace")));
  }
}
