/**
 * The ownership's implementation. Not an API. One concept per class:
 *
 * <ul>
 *   <li>{@code DefaultOwnership}: the ownership's thread (the loop), the owner's callbacks, and the
 *       carrying out of each round's decisions;
 *   <li>{@code RoundPlan}: a round's decisions, a pure function of what the member wants, owns and
 *       what the lock table says (no I/O, no clock), tested on its own over generated groups;
 *   <li>{@code FairShare}: the fair-share rule a plan applies;
 *   <li>{@code IoThread}: the network half (the lock table query, grants, joining), waited for
 *       while the handles are watched, so that a slow network never delays a loss callback;
 *   <li>{@code GroupSnapshot}: one read of the lock table; {@code GroupNudges}: the
 *       {@code pg_notify} channel that starts the others' rounds early.
 * </ul>
 *
 * <p>Whether, and why, a resource's or the membership's lock was lost comes from
 * {@link io.pglock.internal.LossCauseWait}, the helper the election shares.
 */
package io.pglock.ownership.internal;
