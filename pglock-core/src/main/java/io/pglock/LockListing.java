package io.pglock;

import io.pglock.internal.listing.LockListingQuery;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Who holds what: every advisory lock of the database, held or awaited, with names where pglock
 * recorded them, the holder's pglock node, pid, {@code application_name} and address, and who waits
 * since when. Locks taken by other tools (plain SQL, other libraries) appear too, with their keys.
 *
 * <pre>{@code
 * for (LockEntry e : LockListing.of(dataSource).list()) {
 *   System.out.println(e.key() + " " + e.mode() + (e.granted() ? " held by " : " awaited by ") + e.pid());
 * }
 * }</pre>
 *
 * <p>Reads the view {@code <schema>.locks} (schema version 6 or later, {@link PgLockSchema#migrate}),
 * which SQL users can query directly. A role sees the {@code application_name}, address and
 * transaction of other roles' backends only with {@code pg_read_all_stats} (or as superuser); the
 * locks themselves are always listed. See {@code docs/who-holds-what.md}.
 */
public final class LockListing {
  private final DataSource dataSource;
  private final String schema;

  private LockListing(DataSource dataSource, String schema) {
    this.dataSource = dataSource;
    this.schema = schema;
  }

  /**
   * A listing of the database the data source connects to, through the default schema.
   *
   * @param dataSource connections to the database (one is borrowed per {@link #list()})
   * @return the listing
   */
  public static LockListing of(DataSource dataSource) {
    return of(dataSource, PgLockSchema.DEFAULT_SCHEMA);
  }

  /**
   * A listing of the database the data source connects to, through the given schema.
   *
   * @param dataSource connections to the database (one is borrowed per {@link #list()})
   * @param schema the schema pglock's objects are in: a lower-case SQL identifier
   * @return the listing
   * @throws IllegalArgumentException if the schema name is not such an identifier
   */
  public static LockListing of(DataSource dataSource, String schema) {
    return new LockListing(Objects.requireNonNull(dataSource, "dataSource"),
        io.pglock.internal.schema.SchemaMigrator.checkSchema(schema));
  }

  /**
   * Every advisory lock of the database now: holders first, then waiters, each group by key. Each
   * read from the server waits at most 30 s (the connection's network timeout, restored before the
   * connection goes back); connecting is bounded by the data source's own settings.
   *
   * @return the entries, one per holder or waiter of a lock
   * @throws SchemaMissingException if the schema lacks the view
   * @throws LockSessionException if the database cannot be reached, does not answer in time, or the
   *     query fails
   */
  public List<LockEntry> list() {
    return LockListingQuery.list(dataSource, schema);
  }

  @Override
  public String toString() {
    return "LockListing[schema=" + schema + "]";
  }
}
