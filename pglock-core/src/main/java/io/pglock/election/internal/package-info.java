/**
 * The machinery of leader election, built on pglock's public lock API only.
 *
 * <p>{@link io.pglock.election.internal.DefaultLeaderElection} runs one thread per election:
 *
 * <pre>
 *   JITTER --> STANDING --acquire() returns--> LEADING --loss / resign / broken / close--> (revoked, released)
 *                 ^  |                                                                        |
 *                 |  +--broken reported: BACKING_OFF--+                                       |
 *                 +-------------------------------------+-------------------------------------+
 * </pre>
 *
 * <p>Rules: callbacks run on the election's thread, so they are serial and ordered by
 * construction. A clean end (close, resign, broken) revokes before it releases; a loss revokes
 * after the fact (the lock is already gone). The thread is interrupted only while it is blocked in
 * {@code acquire()} or a back-off sleep, never while a user callback runs; the flag is cleared when
 * it leaves those waits.
 */
package io.pglock.election.internal;
