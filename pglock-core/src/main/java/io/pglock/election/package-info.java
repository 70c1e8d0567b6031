/**
 * Leader election on pglock's locks: {@link io.pglock.election.LeaderElection} (join, resign,
 * report broken, close, who leads), {@link io.pglock.election.Candidate} (told when elected and
 * revoked), {@link io.pglock.election.Term} (with its fencing token) and
 * {@link io.pglock.election.Revocation}. Group membership: {@link io.pglock.election.Membership}
 * (join a group, list its live {@link io.pglock.election.Member}s, leave). Built on the public API
 * of {@code io.pglock} only; see {@code docs/leader-election.md} and {@code docs/membership.md} for
 * the guarantees and their limits.
 */
package io.pglock.election;
