package io.pglock.testing;

import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A primary and its streaming standby, both {@link PrivateServer}s of the test, for failover tests:
 * {@link #failover()} kills the primary ({@code pg_ctl stop -m immediate}: its backends quit at
 * once, as in a crash) and promotes the standby, which clients reach through the multi-host
 * {@link #url()} ({@code targetServerType=primary}).
 *
 * <p>Synchronous replication ({@code synchronous_standby_names='*'} on the primary): a commit made
 * with {@code synchronous_commit} on returns only once the standby has flushed it, so the promoted
 * standby has every such commit. Asynchronous: it may miss the last ones; {@link #cutReplication()}
 * makes it miss everything from then on, the worst case, on purpose.
 */
public final class ReplicatedPair implements AutoCloseable {
  private static final Duration CATCH_UP = Duration.ofSeconds(120);

  private final PrivateServer primary;
  private final PrivateServer standby;
  private final boolean synchronous;
  private boolean failedOver;

  private ReplicatedPair(PrivateServer primary, PrivateServer standby, boolean synchronous) {
    this.primary = primary;
    this.standby = standby;
    this.synchronous = synchronous;
  }

  /**
   * Starts a primary, lets {@code prepare} set it up (a schema, tables: the standby's base backup
   * copies them), starts its standby and waits until it streams (synchronously if asked).
   *
   * @param synchronous whether the primary waits for the standby on commit
   * @param prepare work on the primary before the standby is made (may be null)
   * @param settings settings of both servers ({@code name=value}), e.g. {@code max_connections=60}
   *     (a hot standby needs at least the primary's)
   * @return the running pair
   * @throws PrivateServer.Unavailable if the servers cannot run here: skip the test
   * @throws Exception if preparing or starting fails
   */
  public static ReplicatedPair start(boolean synchronous, Prepare prepare, String... settings) throws Exception {
    PrivateServer primary = PrivateServer.start(settings);
    PrivateServer standby = null;
    try {
      if (prepare != null) {
        prepare.on(primary.dataSource("pglock-test-prepare"));
      }
      standby = primary.startStandby(settings);
      if (synchronous) {
        // only now: a primary that waits for a standby before it has one would hang every commit
        try (Connection c = primary.dataSource("pglock-test-replication").getConnection();
            Statement s = c.createStatement()) {
          s.execute("ALTER SYSTEM SET synchronous_standby_names = '*'");
          s.execute("SELECT pg_reload_conf()");
        }
      }
      ReplicatedPair pair = new ReplicatedPair(primary, standby, synchronous);
      pair.awaitStreaming();
      return pair;
    } catch (Exception | Error e) {
      if (standby != null) {
        standby.close();
      }
      primary.close();
      throw e;
    }
  }

  /** Work on the new primary before its standby is made. */
  @FunctionalInterface
  public interface Prepare {
    /**
     * Prepares the primary.
     *
     * @param primary a data source of the primary
     * @throws Exception if it fails
     */
    void on(DataSource primary) throws Exception;
  }

  /**
   * What {@link #failover()} did, as {@link System#nanoTime()} readings.
   *
   * @param killedAt just before the primary was stopped (immediate mode)
   * @param promotedAt once {@code pg_ctl promote -w} returned (it polls: the standby may have become
   *     primary up to about 100 ms earlier)
   */
  public record Failover(long killedAt, long promotedAt) {}

  private void awaitStreaming() throws SQLException {
    String state = synchronous ? "sync_state = 'sync'" : "state = 'streaming'";
    try (Connection c = primary.dataSource("pglock-test-replication").getConnection();
        Statement s = c.createStatement()) {
      Await.until("the standby streams" + (synchronous ? " synchronously" : ""), CATCH_UP, () -> {
        try (ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_replication WHERE " + state)) {
          rs.next();
          return rs.getLong(1) == 1;
        } catch (SQLException e) {
          throw new IllegalStateException(e);
        }
      });
    }
  }

  /** {@return whether the primary waits for the standby on commit} */
  public boolean synchronous() {
    return synchronous;
  }

  /** {@return the primary (dead after {@link #failover()})} */
  public PrivateServer primary() {
    return primary;
  }

  /** {@return the standby (the primary after {@link #failover()})} */
  public PrivateServer standby() {
    return standby;
  }

  /**
   * {@return the multi-host URL, primary first, that reaches whichever is the primary} See
   * {@link PrivateServer#failoverUrl}.
   */
  public String url() {
    return PrivateServer.failoverUrl(primary, standby);
  }

  /**
   * A non-pooling data source over {@link #url()}, user postgres.
   *
   * @param applicationName its connections' {@code application_name}
   * @return the data source
   */
  public DataSource dataSource(String applicationName) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url());
    ds.setUser("postgres");
    ds.setApplicationName(applicationName);
    return ds;
  }

  /**
   * Waits until the standby has replayed everything the primary had written when called: what
   * committed before is on the standby, for a test that must know exactly where a cut falls.
   *
   * @throws SQLException if the primary cannot be reached
   */
  public void awaitStandbyCaughtUp() throws SQLException {
    String lsn;
    try (Connection c = primary.dataSource("pglock-test-replication").getConnection();
        Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_current_wal_insert_lsn()::text")) {
      rs.next();
      lsn = rs.getString(1);
    }
    DataSource ds = standby.dataSource("pglock-test-replication");
    Await.until("the standby replayed " + lsn, CATCH_UP, () -> {
      try (Connection c = ds.getConnection();
          java.sql.PreparedStatement ps = c.prepareStatement("SELECT pg_last_wal_replay_lsn() >= ?::pg_lsn")) {
        ps.setString(1, lsn);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getBoolean(1);
        }
      } catch (SQLException e) {
        return false;
      }
    });
  }

  /**
   * Stops the standby receiving WAL: nothing the primary commits from now on reaches it (only for
   * asynchronous replication: a synchronous primary would wait for it forever).
   *
   * @throws SQLException if the standby cannot be reached
   */
  public void cutReplication() throws SQLException {
    if (synchronous) {
      throw new IllegalStateException("a synchronous primary would wait forever for a standby that receives nothing");
    }
    standby.stopReceivingWal();
  }

  /**
   * Kills the primary (immediate mode, as a crash) and promotes the standby.
   *
   * @return when the primary was killed and when the promotion was done
   * @throws IOException if a command cannot be run
   * @throws InterruptedException if interrupted
   */
  public Failover failover() throws IOException, InterruptedException {
    if (failedOver) {
      throw new IllegalStateException("this pair has failed over already");
    }
    failedOver = true;
    long killed = System.nanoTime();
    primary.stopImmediate();
    standby.promote();
    return new Failover(killed, System.nanoTime());
  }

  /** Stops both servers and deletes their directories. */
  @Override
  public void close() {
    try {
      standby.close();
    } finally {
      primary.close();
    }
  }
}
