/**
 * Reads the database's advisory locks: {@code LockListingQuery} lists the rows of
 * {@code <schema>.locks} as {@link io.pglock.LockEntry} values for {@code LockListing} and for
 * ownership groups. Not API.
 *
 * <p>A package of its own because it is a plain query on a borrowed connection, independent of the
 * lock engine (its statement stays in {@code io.pglock.internal.Sql}, with every other one).
 */
package io.pglock.internal.listing;
