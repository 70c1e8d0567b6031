/**
 * Test support for pglock and for applications that use it: {@link io.pglock.testing.TestDatabase}
 * finds or starts a real PostgreSQL, {@link io.pglock.testing.PrivateServer} runs one of a test's
 * own that it may crash and restart, {@link io.pglock.testing.ReplicatedPair} a primary and its
 * streaming standby for failover tests, {@link io.pglock.testing.NoLeakedLocks} fails a test that
 * leaves an advisory lock held, and {@link io.pglock.testing.SqlClientProcess} runs the Python and
 * Node clients of the SQL API as child processes.
 */
package io.pglock.testing;
