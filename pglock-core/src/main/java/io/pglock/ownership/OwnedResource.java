package io.pglock.ownership;

import java.time.Instant;

/**
 * One resource as owned by one member, from its gain to its loss: what {@link Owner#gained} and
 * {@link Owner#lost} are told.
 *
 * @param group the ownership group's name
 * @param resource the resource's name
 * @param memberId the owning member's id
 * @param fencingToken the fencing token of this ownership: larger than that of every earlier owner
 *     of the resource, durable across restarts (the fencing sequence of pglock's schema). Check it
 *     where the owner writes, with {@code <schema>.check_fencing_token(namespace, lockName, token)}
 *     in the same transaction (see {@code docs/fencing.md}), so that a former owner's late writes fail
 * @param since when this member gained the resource (its own clock)
 * @param namespace the namespace of the resource's lock (that of the member's {@code PgLocks})
 * @param lockName the name of the resource's lock: {@link Ownership#lockName(String, String)}
 */
public record OwnedResource(String group, String resource, String memberId, long fencingToken, Instant since,
    String namespace, String lockName) {
}
