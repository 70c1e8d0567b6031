package io.pglock.election;

import io.pglock.LossCause;
import io.pglock.PgLocks;
import io.pglock.election.internal.DefaultMembership;
import io.pglock.election.internal.MemberLookup;
import java.util.List;
import java.util.concurrent.CompletionStage;
import javax.sql.DataSource;

/**
 * One node's membership in a named group of a fleet: while it is joined, every node (member or
 * not) lists it among the group's live members.
 *
 * <pre>{@code
 * PgLockSchema.migrate(dataSource, "pglock");          // once: the who-holds-what view
 * PgLocks locks = PgLocks.builder(dataSource).namespace("billing").build();
 * Membership me = Membership.join(locks, "workers");   // id: the node name of locks
 * me.lost().thenAccept(cause -> log.warn("left workers: {}", cause));
 * List<Member> fleet = me.members();                    // sorted by id, this node included
 * ...
 * me.close();                                           // leaves at once
 * }</pre>
 *
 * <p><b>How</b>: a member holds the exclusive session lock {@code "member:<group>:<id>"}
 * ({@link #lockName}) in the namespace of its {@code PgLocks} for as long as it is joined. The live
 * members are the holders of the locks whose names begin with {@code "member:<group>:"} in that
 * namespace, read from the server's lock table through the who-holds-what view
 * ({@link io.pglock.LockListing}). So a member is listed exactly while the server says it holds its
 * lock: no heartbeat table, nothing to clean up after a crash. The view shows a lock's name only
 * once it is recorded, which pglock does in the background about a second after a first grant; so
 * {@link #join} records the member's name itself, in one statement on a borrowed connection before
 * it takes the lock, and a member is listed as soon as {@code join} returns.
 *
 * <p><b>Guarantees</b>: the list is a snapshot of the server's lock table at one instant. A member
 * is listed from the end of its {@code join} until its {@link #close()} (which drops it at once),
 * or until the server frees its lock: at once when its process or connection dies or its backend
 * is terminated, within the lease ({@link io.pglock.PgLocksBuilder}) when it is paused or cut off
 * silently. At most one member holds an id in a group at a time. <b>Not guaranteed</b>: that
 * every node sees a change at the same instant (each list is read when asked for; there are no
 * change notifications); that a listed member is still alive when the list is used; that a paused
 * member knows it has left before the others stop listing it (it learns when it resumes, through
 * {@link #lost()}). During a database failover every member leaves and nobody is listed until the
 * members join again.
 *
 * <p><b>On connection loss</b>: the membership ends: {@link #lost()} completes with the cause
 * ({@link LossCause#CONNECTION_LOST} or {@link LossCause#LEASE_EXPIRED}), {@link #isJoined()}
 * turns false and the others stop listing this member. It does <b>not</b> rejoin by itself: the
 * others have seen it leave, and whatever it was doing as a member (work it owned) has to be
 * stopped or re-checked before it joins again. To rejoin, call {@link #join} again (from
 * {@code lost()}, retrying while the database is away).
 *
 * <p>Thread-safe. {@link #join} and {@link #members()} wait for the network; the others do not.
 */
public interface Membership extends AutoCloseable {

  /**
   * Joins a group with the node name of the {@code PgLocks} as the member's id.
   *
   * @param locks the locks to hold the member's lock with (one {@code PgLocks} per node)
   * @param group the group's name: not blank, no {@code ':'}
   * @return the membership, joined: the member is listed from now on
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the group is blank or has a {@code ':'}, or the lock name
   *     is too long
   * @throws IllegalStateException if a member with this id is already in the group (nothing is
   *     then held)
   * @throws io.pglock.SchemaMissingException if the schema lacks pglock's name table
   *     ({@link io.pglock.PgLockSchema#migrate})
   * @throws io.pglock.LockSessionException if the database cannot be reached
   * @throws io.pglock.PgLocksClosedException if the {@code PgLocks} is closed
   */
  static Membership join(PgLocks locks, String group) {
    return join(locks, group, locks.config().nodeName());
  }

  /**
   * Joins a group as a member with the given id.
   *
   * @param locks the locks to hold the member's lock with (one {@code PgLocks} per node)
   * @param group the group's name: not blank, no {@code ':'}
   * @param memberId the member's id: not blank, unique in the group
   * @return the membership, joined: the member is listed from now on
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the group is blank or has a {@code ':'}, the id is blank,
   *     or the lock name is too long
   * @throws IllegalStateException if a member with this id is already in the group, through this
   *     {@code PgLocks} or another (nothing is then held)
   * @throws io.pglock.SchemaMissingException if the schema lacks pglock's name table
   *     ({@link io.pglock.PgLockSchema#migrate})
   * @throws io.pglock.LockSessionException if the database cannot be reached
   * @throws io.pglock.PgLocksClosedException if the {@code PgLocks} is closed
   */
  static Membership join(PgLocks locks, String group, String memberId) {
    return DefaultMembership.join(locks, group, memberId);
  }

  /**
   * The name of a member's lock, in the namespace of the {@code PgLocks} that joins.
   *
   * @param group the group's name
   * @param memberId the member's id
   * @return {@code "member:" + group + ":" + memberId}
   */
  static String lockName(String group, String memberId) {
    return "member:" + group + ":" + memberId;
  }

  /**
   * The live members of a group now, read from the server's lock table through the who-holds-what
   * view (schema version 6 or later): one query on a connection borrowed from the instance's data
   * source. Works from any node, member of the group or not.
   *
   * @param locks an instance in the group's namespace (its data source and schema are used)
   * @param group the group's name
   * @return the members, sorted by id; empty if nobody is in the group
   * @throws IllegalArgumentException if the group is blank or has a {@code ':'}
   * @throws io.pglock.SchemaMissingException if the schema lacks the view
   * @throws io.pglock.LockSessionException if the database cannot be reached
   */
  static List<Member> members(PgLocks locks, String group) {
    return MemberLookup.find(locks.config().dataSource(), locks.config().schema(), locks.config().namespace(), group);
  }

  /**
   * The live members of a group now, as {@link #members(PgLocks, String)}, without a
   * {@code PgLocks}.
   *
   * @param dataSource connections to the database (one is borrowed for the query)
   * @param schema the schema of pglock's objects, such as {@code "pglock"}
   * @param namespace the group's namespace (that of the members' {@code PgLocks})
   * @param group the group's name
   * @return the members, sorted by id; empty if nobody is in the group
   * @throws IllegalArgumentException if the schema, namespace or group is not valid
   * @throws io.pglock.SchemaMissingException if the schema lacks the view
   * @throws io.pglock.LockSessionException if the database cannot be reached
   */
  static List<Member> members(DataSource dataSource, String schema, String namespace, String group) {
    return MemberLookup.find(dataSource, schema, namespace, group);
  }

  /** {@return the group's name} */
  String group();

  /** {@return this member's id in the group} */
  String memberId();

  /**
   * True while this member holds its lock: not closed, not lost, and the lease not run out
   * (checked against the lease deadline, without the network).
   *
   * @return whether this member is in the group now
   */
  boolean isJoined();

  /**
   * The live members of this member's group now, as {@link #members(PgLocks, String)}: this member
   * among them while it is joined.
   *
   * @return the members, sorted by id
   * @throws io.pglock.SchemaMissingException if the schema lacks the view
   * @throws io.pglock.LockSessionException if the database cannot be reached
   */
  List<Member> members();

  /**
   * Completes with the cause if this member's lock is lost before {@link #close()}: the
   * membership has ended and is not renewed (see the class doc). Never completes if the member
   * leaves by {@code close()} first. Dependent stages run on the {@code PgLocks}' callback executor.
   *
   * @return a stage that completes with the cause of the loss
   */
  CompletionStage<LossCause> lost();

  /**
   * Leaves the group at once: releases the member's lock, so that nobody lists it from now on.
   * Idempotent, any thread, never throws, does not wait for the network. Does not close the
   * {@code PgLocks}.
   */
  @Override
  void close();
}
