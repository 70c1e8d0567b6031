package io.pglock.election;

import io.pglock.PgLocks;
import io.pglock.election.internal.LeaderLookup;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * One node's membership in a leader election: at most one node of the fleet leads an election at
 * a time, and every node is told, through its {@link Candidate}, when its own term begins and ends.
 *
 * <pre>{@code
 * PgLockSchema.migrate(dataSource, "pglock");          // once: the fencing tokens
 * PgLocks locks = PgLocks.builder(dataSource).namespace("billing").build();
 * LeaderElection election = LeaderElection.join(locks, "billing-daemon", new Candidate() {
 *   public void elected(Term term) { daemon.start(term.fencingToken()); }
 *   public void revoked(Term term, Revocation reason) { daemon.stop(); }
 * });
 * ...
 * election.close();                                     // hands over at once
 * }</pre>
 *
 * <p><b>How</b>: the election is the exclusive, fenced session lock {@code "election:<name>"} in the
 * namespace of the {@code PgLocks}. A thread per election ({@code pglock-<node>-election-<name>})
 * stands: it waits for the lock with a blocking acquire, which the server ends the moment the lock
 * is freed (no polling), so a standby takes over as soon as the leader releases or its connection
 * dies. The holder is the leader; its term's token is the grant's fencing token. While it leads, the
 * thread watches the lock's handle and revokes the term when it is lost. The first attempt is
 * delayed by a random jitter so that a fleet starting at once does not arrive together.
 *
 * <p><b>Guarantees</b>: those of the lock (see {@code docs/leader-election.md}). At most one node
 * holds the lock at a time; terms' fencing tokens strictly increase. A leader whose lease runs out
 * (a pause, a silent network) loses the term on its own side before the server can free the lock
 * for a successor. A clean end ({@link #close()}, {@link #resign()}, {@link #reportBroken}) revokes
 * the term before it releases the lock. <b>Not guaranteed</b>: after {@code pg_terminate_backend},
 * a server crash or a failover the lock is freed at once and a successor may be elected before the
 * old leader's revocation runs; a paused leader learns of the loss only when it resumes. Writes that
 * must not come from a stale leader check the term's fencing token.
 *
 * <p><b>On connection loss</b>: the term is revoked with {@link Revocation#CONNECTION_LOST} or
 * {@link Revocation#LEASE_EXPIRED} and the node stands again at once (it reconnects with the
 * lock's backoff while the database is away).
 *
 * <p>Thread-safe. Every method returns without waiting for the network; {@link #close()} waits for
 * the election's thread, bounded by the close timeout.
 */
public interface LeaderElection extends AutoCloseable {

  /**
   * Joins an election with the default settings of {@link LeaderElectionBuilder}.
   *
   * @param locks the locks to hold the election's lock with (one {@code PgLocks} per node)
   * @param name the election's name: not blank; {@code "election:" + name} is the lock's name
   * @param candidate told when this node is elected and revoked
   * @return the election, already standing (on its own thread)
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the name is blank or too long for a lock name
   * @throws io.pglock.SchemaMissingException if the database lacks the fencing schema
   *     ({@link io.pglock.PgLockSchema#migrate})
   * @throws io.pglock.PgLocksClosedException if the {@code PgLocks} is closed
   */
  static LeaderElection join(PgLocks locks, String name, Candidate candidate) {
    return builder(locks, name).join(candidate);
  }

  /**
   * A builder for joining an election with settings of one's own.
   *
   * @param locks the locks to hold the election's lock with (one {@code PgLocks} per node)
   * @param name the election's name: not blank; {@code "election:" + name} is the lock's name
   * @return the builder
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the name is blank
   */
  static LeaderElectionBuilder builder(PgLocks locks, String name) {
    return new LeaderElectionBuilder(locks, name);
  }

  /**
   * The name of an election's lock, in the namespace of the {@code PgLocks} that joins it.
   *
   * @param election the election's name
   * @return {@code "election:" + election}
   */
  static String lockName(String election) {
    return "election:" + election;
  }

  /**
   * Who leads the election now, read from the server's lock table through the who-holds-what view
   * (schema version 6 or later): one query on a connection borrowed from the instance's data source.
   * Works from any node, member of the election or not.
   *
   * @param locks an instance in the election's namespace (its data source and schema are used)
   * @param name the election's name
   * @return the leader, or empty if nobody holds the election's lock right now
   * @throws io.pglock.SchemaMissingException if the schema lacks the view
   * @throws io.pglock.LockSessionException if the database cannot be reached
   */
  static Optional<Leader> currentLeader(PgLocks locks, String name) {
    return LeaderLookup.find(locks.config().dataSource(), locks.config().schema(), locks.config().namespace(), name);
  }

  /**
   * Who leads the election now, as {@link #currentLeader(PgLocks, String)}, without a
   * {@code PgLocks}.
   *
   * @param dataSource connections to the database (one is borrowed for the query)
   * @param schema the schema of pglock's objects, such as {@code "pglock"}
   * @param namespace the election's namespace (that of the members' {@code PgLocks})
   * @param name the election's name
   * @return the leader, or empty if nobody holds the election's lock right now
   * @throws IllegalArgumentException if the schema or namespace is not valid
   * @throws io.pglock.SchemaMissingException if the schema lacks the view
   * @throws io.pglock.LockSessionException if the database cannot be reached
   */
  static Optional<Leader> currentLeader(DataSource dataSource, String schema, String namespace, String name) {
    return LeaderLookup.find(dataSource, schema, namespace, name);
  }

  /** {@return the election's name} */
  String name();

  /**
   * True while this node's term is current: it was elected, the term has not been revoked, and the
   * election's lock is still held (checked against the lease deadline, without the network).
   *
   * @return whether this node leads now
   */
  boolean isLeader();

  /** {@return this node's current term, or empty when it does not lead} */
  Optional<Term> currentTerm();

  /**
   * Ends this node's term, if it leads, with {@link Revocation#RELEASED}: the term is revoked, the
   * lock released, and the node stands again at once (behind the standbys already waiting on the
   * server, which PostgreSQL serves first). Does nothing when the node does not lead. Does not wait.
   */
  void resign();

  /**
   * Reports that this node's process is broken. If it leads, its term ends with
   * {@link Revocation#BROKEN} (revoked, then released, so a standby takes over); either way it stops
   * standing for a back-off (random, between the builder's bounds) before it stands again. A new
   * report during the back-off starts it again. Does nothing after {@link #close()}. Does not wait.
   *
   * @param cause what broke, for the log
   * @throws NullPointerException if the cause is null
   */
  void reportBroken(Throwable cause);

  /**
   * Leaves the election: stops standing; if this node leads, revokes the term with
   * {@link Revocation#SHUTDOWN} and then releases the lock, so that a standby is elected at once.
   * Waits for the election's thread to finish, at most the close timeout
   * ({@link LeaderElectionBuilder#closeTimeout}); if a callback is still running then, the lock is
   * released anyway (a successor may be elected while that callback runs) and a warning logged.
   * Called from a callback, it does not wait: the revocation follows when the callback returns.
   * Idempotent; never throws. Does not close the {@code PgLocks}.
   */
  @Override
  void close();
}
