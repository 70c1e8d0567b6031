package io.pglock.spring.health;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.PgLocksConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What the health contributor reports, independent of the Actuator version: the Boot 3 and Boot 4
 * indicators only translate it. Works without Actuator too ({@link #check()}).
 *
 * <p>Details: namespace, node, open lock sessions, held locks and their cap, the lease margin
 * ({@link PgLocks#leaseMargin()}), the schema's version, and what the other pglock beans add
 * (elections led, workers, scheduled tasks).
 *
 * <p>DOWN means this node cannot coordinate: the database does not answer within 5 s, or the
 * schema is older than this library needs. A node that holds nothing, leads nothing and has no
 * job to run is UP: being passive (a standby, an idle worker) is its job, and a health check that
 * failed it would make the platform restart healthy standbys.
 */
public final class PgLockHealth {
  /** How long the database probe may take before the node is reported DOWN. */
  public static final int PROBE_TIMEOUT_SECONDS = 5;

  private final PgLocks locks;
  private final Consumer<Map<String, Object>> contributors;

  /**
   * A status and its details.
   *
   * @param up true if this node can coordinate
   * @param details what the health endpoint shows
   */
  public record Result(boolean up, Map<String, Object> details) {}

  /**
   * Creates the check.
   *
   * @param locks the node's instance
   * @param contributors adds details of other pglock beans (elections led, workers, tasks)
   */
  public PgLockHealth(PgLocks locks, Consumer<Map<String, Object>> contributors) {
    this.locks = locks;
    this.contributors = contributors;
  }

  /** {@return the node's status and details} */
  public Result check() {
    PgLocksConfig config = locks.config();
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("namespace", config.namespace());
    d.put("node", config.nodeName());
    d.put("lockSessions", locks.openSessions());
    d.put("heldLocks", locks.heldLocks());
    d.put("maxHeldLocks", locks.maxHeldLocks());
    // how long this node could go without a round trip before counting its locks lost: near the
    // lease when healthy, falling toward zero when round trips stop coming back
    locks.leaseMargin().ifPresent(m -> d.put("leaseMarginMs", m.toMillis()));
    boolean up = true;
    try {
      int version = schemaVersion(config);
      d.put("schemaVersion", version);
      d.put("schemaVersionNeeded", PgLockSchema.latestVersion());
      if (version >= 0 && version < PgLockSchema.latestVersion()) {
        up = false;
        d.put("error", "schema \"" + config.schema() + "\" is at version " + version + ", this library needs "
            + PgLockSchema.latestVersion() + ": migrate it (pglock.schema.migrate=true, or PgLockSchema.migrate)");
      }
    } catch (SQLException | RuntimeException e) {
      up = false;
      d.put("error", "the database did not answer: " + e.getMessage());
    }
    try {
      contributors.accept(d);
    } catch (RuntimeException e) {
      d.put("detailsError", String.valueOf(e));
    }
    return new Result(up, d);
  }

  /** The schema's version, or -1 when it has no version table (applied with Flyway or Liquibase). */
  private static int schemaVersion(PgLocksConfig config) throws SQLException {
    try (Connection c = config.dataSource().getConnection()) {
      try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
        ps.setQueryTimeout(PROBE_TIMEOUT_SECONDS);
        ps.setString(1, config.schema() + ".schema_version");
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          if (!rs.getBoolean(1)) {
            return -1;
          }
        }
      }
      // the schema name is validated by the builder: a lower-case identifier
      try (PreparedStatement ps = c.prepareStatement("SELECT coalesce(max(version), 0) FROM " + config.schema()
          + ".schema_version")) {
        ps.setQueryTimeout(PROBE_TIMEOUT_SECONDS);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getInt(1);
        }
      }
    }
  }
}
