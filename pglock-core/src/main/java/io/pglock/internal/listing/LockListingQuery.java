package io.pglock.internal.listing;

import io.pglock.LockEntry;
import io.pglock.LockKey;
import io.pglock.LockMode;
import io.pglock.LockSessionException;
import io.pglock.SchemaMissingException;
import io.pglock.internal.Sql;
import io.pglock.internal.SqlErrors;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/** Reads {@code <schema>.locks} for {@link io.pglock.LockListing}. */
public final class LockListingQuery {
  private LockListingQuery() {}

  /** SQLSTATEs of a missing view: undefined_table, invalid_schema_name, insufficient_privilege (no USAGE). */
  private static final List<String> VIEW_MISSING = List.of("42P01", "3F000", "42501");

  /** How long {@link io.pglock.LockListing#list()} waits for the server's answers: 30 s. */
  public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(30);

  /** See {@link io.pglock.LockListing#list()}. */
  public static List<LockEntry> list(DataSource dataSource, String schema) {
    return list(dataSource, schema, DEFAULT_READ_TIMEOUT);
  }

  /**
   * See {@link io.pglock.LockListing#list()}; each read from the server waits at most
   * {@code readTimeout} (the connection's network timeout, restored before it goes back), so that
   * a silent network cannot hold the caller past it.
   */
  public static List<LockEntry> list(DataSource dataSource, String schema, Duration readTimeout) {
    try (Connection c = dataSource.getConnection()) {
      int before = c.getNetworkTimeout();
      c.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, Math.max(1, readTimeout.toMillis())));
      try {
        return list(c, schema);
      } finally {
        c.setNetworkTimeout(Runnable::run, before);
      }
    } catch (SQLException e) {
      throw new LockSessionException("could not list the database's advisory locks: " + SqlErrors.describe(e), e);
    }
  }

  /**
   * One statement: the view's absence shows as the query's error (undefined table or schema, no
   * USAGE on the schema), not as a catalog check before each listing.
   */
  private static List<LockEntry> list(Connection c, String schema) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(Sql.listLocks(schema)); ResultSet rs = ps.executeQuery()) {
      List<LockEntry> entries = new ArrayList<>();
      while (rs.next()) {
        entries.add(entry(rs));
      }
      return entries;
    } catch (SQLException e) {
      if (VIEW_MISSING.contains(e.getSQLState())) {
        throw new SchemaMissingException("the view " + schema + ".locks is missing: it needs pglock's schema \""
            + schema + "\" at version 6 or later (and USAGE on it); run PgLockSchema.migrate(dataSource, \"" + schema
            + "\") once, or apply the files under io/pglock/schema/ with Flyway or Liquibase (SQLSTATE " + e.getSQLState()
            + ")");
      }
      throw e;
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
