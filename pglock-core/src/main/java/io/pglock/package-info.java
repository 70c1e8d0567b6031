/**
 * pglock: distributed locks for Java fleets on PostgreSQL advisory locks.
 *
 * <p>Start with {@link io.pglock.PgLocks#builder(javax.sql.DataSource)}. Session locks
 * ({@link io.pglock.SessionLock}, {@link io.pglock.SessionReadWriteLock}) return
 * {@link io.pglock.LockHandle}s held on pglock's own connections; transaction locks
 * ({@link io.pglock.TransactionLocks}) ride on the caller's transaction. Keys are
 * {@link io.pglock.LockKey}s in three key spaces. {@link io.pglock.WorkDistributor} spreads a list of
 * resources over many workers. {@link io.pglock.PgLockSchema} installs the SQL twin of the key
 * derivation.
 *
 * <p>This package is the whole public API; {@code io.pglock.internal} is not, and may change in any
 * release. Guarantees, and what is not guaranteed, are in {@code docs/locks.md}.
 */
package io.pglock;
