/**
 * Fair-share ownership on pglock's locks: {@link io.pglock.ownership.Ownership} spreads a set of
 * resources over the live members of a group, each owned by one member at a time, and tells each
 * member's {@link io.pglock.ownership.Owner} what it gains and loses, with a fencing token
 * ({@link io.pglock.ownership.OwnedResource}) and the reason ({@link io.pglock.ownership.Release}).
 * Built on the public API of {@code io.pglock} and its membership
 * ({@link io.pglock.election.Membership}); see {@code docs/ownership.md} for the guarantees and
 * their limits.
 */
package io.pglock.ownership;
