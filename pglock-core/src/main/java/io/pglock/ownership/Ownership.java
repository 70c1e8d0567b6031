package io.pglock.ownership;

import io.pglock.PgLocks;
import io.pglock.election.Member;
import io.pglock.election.internal.MemberLookup;
import io.pglock.internal.listing.LockListingQuery;
import io.pglock.ownership.internal.GroupSnapshot;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;

/**
 * Fair-share ownership: a set of resources (shards, tenants, partitions) spread over the live
 * members of a group, each resource owned by exactly one member at a time, rebalanced as members
 * come and go, with no configuration.
 *
 * <pre>{@code
 * PgLockSchema.migrate(dataSource, "pglock");     // once: fencing and the who-holds-what view
 * PgLocks locks = PgLocks.builder(dataSource).namespace("billing").build();
 * Ownership shards = Ownership.join(locks, "shards", List.of("s0", "s1", "s2", "s3"), new Owner() {
 *   public void gained(OwnedResource r) { consumers.start(r.resource(), r.fencingToken()); }
 *   public void lost(OwnedResource r, Release why) { consumers.stop(r.resource()); }
 * });
 * ...
 * shards.close();                                  // hands every resource on at once
 * }</pre>
 *
 * <p><b>How</b>: a member joins the group's {@link io.pglock.election.Membership} (the lock
 * {@code "member:<group>:<id>"}), and owns a resource while it holds the exclusive, fenced session
 * lock {@code "own:<group>:<resource>"} ({@link #lockName}). Each member runs a balancing round at
 * every {@linkplain OwnershipBuilder#rebalanceInterval interval} (jittered): one query of the
 * server's lock table tells the live members and who holds what; the member computes its fair
 * share ({@code R / n}, one more for {@code R % n} members: those that hold the most, ties by id),
 * gives up what it holds beyond it and tries, without waiting, free resources up to it. Resources
 * whose lock is free are taken by whoever gets there first; a resource is never handed between
 * members except through the server freeing its lock.
 *
 * <p><b>Guarantees</b>:
 * <ul>
 *   <li>A resource has at most one owner at a time, as the server sees it: its lock is exclusive.
 *       Each ownership has a fencing token larger than every earlier owner's, for writes that must
 *       not come from a former owner.
 *   <li>A member is told {@link Owner#lost} before it gives a resource up (so the next owner gains
 *       it only after), and, when the resource is taken away, as soon as it notices: at once for a
 *       connection it sees die, and before the server may free the lock for a lease that runs out
 *       (the core's lease rule). Callbacks run one at a time, in order, on the ownership's thread.
 *   <li>When membership has been stable for a few intervals, owned counts differ by at most one.
 *   <li>A member that leaves cleanly ({@link #close()}) frees its resources at once: the others take
 *       them at their next round. One that crashes frees them when the server frees its locks: at
 *       once for a process or connection that dies, within the lease for a paused or silently cut
 *       off one; the others take them at their next round after that.
 *   <li>A member whose membership or locks are lost (connection, lease) rejoins by itself, with a
 *       back-off, and gains resources again with new tokens.
 * </ul>
 * <b>Not guaranteed</b>: that a former owner stops work the instant the next one starts. A paused
 * member is told only when it resumes; the fencing token covers that gap. Between a crash and the
 * next round of the others a resource may have no owner (at most an interval, plus the lease when
 * the server has to notice the crash). During a database failover every member loses everything,
 * and all rejoin on the new primary; tokens stay increasing only if the fencing sequence was
 * replicated (see {@code docs/fencing.md}).
 *
 * <p><b>Cost</b>: per member, one query of the lock table per interval, plus the lock grants and
 * releases of rebalancing; the resources' locks ride on the {@code PgLocks}' lock sessions.
 *
 * <p>Thread-safe. {@link #join}, {@link #owners} and {@link #members()} wait for the network, and
 * {@link #close()} waits for the owner's last callbacks; the others do not.
 */
public interface Ownership extends AutoCloseable {

  /**
   * Joins a group with the default settings ({@link #builder}).
   *
   * @param locks the locks to hold the member's and the resources' locks with (one per node)
   * @param group the group's name: not blank, no {@code ':'}
   * @param resources the resources to share: names, not blank; duplicates count once
   * @param owner told when this member gains and loses resources
   * @return the ownership, started
   * @throws NullPointerException if an argument or a resource name is null
   * @throws IllegalArgumentException if the group or a resource name is not valid, a lock name is
   *     too long, or the node name of the {@code PgLocks} has a {@code ':'}
   * @throws IllegalStateException if a member with this id, or another member with this node name,
   *     is already in the group (nothing is then held)
   * @throws io.pglock.SchemaMissingException if the schema lacks fencing or the who-holds-what view
   *     ({@link io.pglock.PgLockSchema#migrate})
   * @throws io.pglock.LockSessionException if the database cannot be reached
   * @throws io.pglock.PgLocksClosedException if the {@code PgLocks} is closed
   */
  static Ownership join(PgLocks locks, String group, Collection<String> resources, Owner owner) {
    return builder(locks, group).join(resources, owner);
  }

  /**
   * Settings for joining a group.
   *
   * @param locks the locks to hold the member's and the resources' locks with (one per node)
   * @param group the group's name: not blank, no {@code ':'}
   * @return a builder
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the group is blank or has a {@code ':'}
   */
  static OwnershipBuilder builder(PgLocks locks, String group) {
    return new OwnershipBuilder(locks, group);
  }

  /**
   * The name of a resource's lock, in the namespace of the members' {@code PgLocks}.
   *
   * @param group the group's name
   * @param resource the resource's name
   * @return {@code "own:" + group + ":" + resource}
   */
  static String lockName(String group, String resource) {
    return "own:" + group + ":" + resource;
  }

  /**
   * Who owns which resource of a group now, read from the server's lock table (one query, reads
   * bounded by 30 s). Works from any node, member or not.
   *
   * @param locks an instance in the group's namespace (its data source and schema are used)
   * @param group the group's name
   * @return the owned resources, sorted by name; a resource nobody owns is not listed
   * @throws IllegalArgumentException if the group is blank or has a {@code ':'}
   * @throws io.pglock.SchemaMissingException if the schema lacks the view
   * @throws io.pglock.LockSessionException if the database cannot be reached
   */
  static List<ResourceOwner> owners(PgLocks locks, String group) {
    return owners(locks.config().dataSource(), locks.config().schema(), locks.config().namespace(), group);
  }

  /**
   * Who owns which resource of a group now, as {@link #owners(PgLocks, String)}, without a
   * {@code PgLocks}.
   *
   * @param dataSource connections to the database (one is borrowed for the query)
   * @param schema the schema of pglock's objects, such as {@code "pglock"}
   * @param namespace the group's namespace (that of the members' {@code PgLocks})
   * @param group the group's name
   * @return the owned resources, sorted by name
   * @throws IllegalArgumentException if the schema, namespace or group is not valid
   * @throws io.pglock.SchemaMissingException if the schema lacks the view
   * @throws io.pglock.LockSessionException if the database cannot be reached
   */
  static List<ResourceOwner> owners(DataSource dataSource, String schema, String namespace, String group) {
    return GroupSnapshot.read(dataSource, schema, namespace, MemberLookup.checkGroup(group),
        LockListingQuery.DEFAULT_READ_TIMEOUT)
        .ownerList();
  }

  /** {@return the group's name} */
  String group();

  /** {@return this member's id in the group} */
  String memberId();

  /** {@return the resources this member shares now: the last set given} */
  Set<String> resources();

  /**
   * Replaces the set of resources to share: resources no longer in it are given up at once
   * ({@link Release#REMOVED}), new ones are taken in the next round, which starts now. Every member
   * should be given the same set; while sets differ, the balance is computed from each member's own.
   *
   * @param resources the resources: names, not blank; duplicates count once
   * @throws NullPointerException if the collection or a name is null
   * @throws IllegalArgumentException if a name is blank or its lock name is too long
   */
  void resources(Collection<String> resources);

  /**
   * The resources this member owns now (held, lease not run out; checked locally, no I/O).
   *
   * @return the owned resources, sorted by name
   */
  List<OwnedResource> owned();

  /**
   * This member's ownership of one resource, if it owns it now (held, lease not run out).
   *
   * @param resource the resource's name
   * @return the ownership, with its fencing token, or empty
   */
  Optional<OwnedResource> ownership(String resource);

  /**
   * The live members of the group now, as {@link io.pglock.election.Membership#members()}.
   *
   * @return the members, sorted by id
   * @throws io.pglock.SchemaMissingException if the schema lacks the view
   * @throws io.pglock.LockSessionException if the database cannot be reached
   */
  List<Member> members();

  /** Starts a balancing round now instead of at the next interval. Does not wait for it. */
  void rebalance();

  /**
   * Leaves the group: tells the owner {@link Release#SHUTDOWN} for each resource, releases the
   * resources' locks, then the membership, and nudges the others, who take the resources at once.
   * Waits for that up to {@link OwnershipBuilder#closeTimeout} (not when called from a callback:
   * then the ownership's thread does it when the callback returns). When the time is up it returns
   * anyway, and the resources still owned are released as soon as their {@code lost} callbacks
   * return: never before. Idempotent; never throws. Does not close the {@code PgLocks}: close the
   * ownership first.
   */
  @Override
  void close();
}
