/**
 * The engine behind {@link io.pglock.PgLocks}. Not API.
 *
 * <p>Its classes share package-private state, so the engine is this one package. What is not the
 * engine lives in sub-packages, one concept each: {@code schema} (migrations), {@code recording}
 * (the background writers of lock history and lock names, which the engine only hands notes),
 * {@code listing} (the locks view query) and {@code util} (helpers the other modules share). The
 * few members here that are public for them ({@code Sql}, {@code SqlErrors},
 * {@code SessionSetup.checkPostgres}) are not API either.
 *
 * <h2>Pieces</h2>
 * <ul>
 *   <li>{@code LockTable}: the local half of every session lock, one {@code KeyState} per server
 *       lock (key space and 64 bits, so a name and its hash's number are one state), in 64 striped
 *       maps. It decides whether an acquire needs the server at all.
 *   <li>{@code ServerFetch}: the representative's way to the server lock: try-lock, then a blocking
 *       wait on a wait session, or polling with backoff.
 *   <li>{@code LockSession}: one connection carrying many server locks, and its loop;
 *       {@code SessionStatements} is the plain JDBC under it.
 *   <li>{@code Sessions}: a fixed set of lock sessions (a key always maps to the same one, so a
 *       release and the next try of a key are ordered on one queue) and a bounded pool of wait
 *       sessions for blocking waits.
 * </ul>
 *
 * <h2>A key's local states</h2>
 * <pre>
 *            acquire (free)                    server grants
 *   FREE ───────────────────▶ FETCHING (busy) ─────────────────▶ HELD (session, mode, handles ≥ 1)
 *    ▲                         │ refused / timeout                 │  │ last handle closed,
 *    │                         ▼                                   │  │ a compatible waiter, handoffs &lt; max
 *    │◀──── no waiters ── next waiter becomes the representative   │  └──▶ HELD (handed over locally)
 *    │                                                              │ last handle closed otherwise
 *    └──── unlock answered (wait session) ◀── UNLOCK PENDING ◀──────┘ (lock session: the unlock is
 *                                                                      queued and the state is free at once)
 * </pre>
 * One thread at a time (the representative) asks the server for a key; other local acquirers of the
 * key queue behind it and get the lock handed over without a round trip when the holder closes its
 * handle, at most {@code maxLocalHandoffs} times in a row, so that other processes get their turn.
 * Shared acquires join a held shared lock without a round trip unless a waiter is queued.
 *
 * <h2>Batching</h2>
 * A lock session runs one statement per batch: try-locks and unlocks over arrays, evaluated strictly
 * in queue order, one boolean per position. A caller that needs an answer and finds the session idle
 * runs the batch itself (no thread handoff); releases only queue and wake the loop, so a handle's
 * {@code close()} never waits for the network. The next batch forms while one is in flight; there is
 * no artificial delay.
 *
 * <h2>Failure rules</h2>
 * <ul>
 *   <li>A failed batch leaves the session's server state unknown (session locks ignore the
 *       statement's failure), so the session is closed: the server frees all its locks, and every
 *       handle on it becomes LOST (CONNECTION_LOST).
 *   <li>The lease ({@code Lease}): past {@code s_last + lease − margin}, where s_last is the send time
 *       of the newest successful statement, the watchdog closes the session and its handles become
 *       LOST (LEASE_EXPIRED). The server cannot free the locks before {@code s_last + lease}.
 *   <li>A wait ended by {@code lock_timeout} or a cancel is followed by a look at {@code pg_locks}:
 *       a lock granted at the last moment is handed to the waiter, or released if it gave up.
 *   <li>A grant whose waiter gave up (abandoned op) is released in the same loop iteration, never
 *       handed to anyone.
 *   <li>Every heartbeat compares the backend pid with the one seen at connect: a change means a
 *       transaction-mode pooler, and the session is closed.
 *   <li>A session that holds locks and is idle looks every 40 ms for a message the server sent on
 *       its own (a FATAL error before it closes the connection) with a one-millisecond socket read:
 *       no statement, no round trip. Reading one ends the session at once.
 *   <li>The lease is read on two clocks (monotonic and wall); either one past the deadline ends it.
 * </ul>
 *
 * <h2>Bounds</h2>
 * No network I/O happens under a monitor another caller needs. Sessions open on threads of their
 * own ({@code Sessions}); callers wait for an open, for a try's answer and for a blocking wait at most
 * their own deadline plus the connect timeout, then abandon the op (a late grant is released by the
 * session) and, for a blocking wait, send the cancel from another thread. A caller sends its own
 * batch (combining) only while its session answered within the last 50 ms, since the thread that
 * sends is the one that must read the answer.
 */
package io.pglock.internal;
