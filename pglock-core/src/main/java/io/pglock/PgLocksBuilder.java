package io.pglock;

import io.pglock.internal.DefaultPgLocks;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import javax.sql.DataSource;

/**
 * Builds a {@link PgLocks}. Each option may be set once; a bad value is refused when it is set
 * ({@link IllegalArgumentException} naming the option, the value and the limit) and a repeated
 * option with {@link IllegalStateException}. Not thread-safe.
 */
public final class PgLocksBuilder {
  /** The lease when none is set. */
  public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
  /** The shortest lease accepted. */
  public static final Duration MIN_LEASE = Duration.ofSeconds(1);
  /** The longest lease accepted. */
  public static final Duration MAX_LEASE = Duration.ofHours(1);
  /**
   * The most the automatic cap on held locks can be: when none is set, the cap is a quarter of the
   * server's lock table, at most this many.
   */
  public static final int DEFAULT_MAX_HELD_LOCKS = 2_000;
  /** The highest cap accepted: the lock table of a server with generous settings. */
  public static final int MAX_MAX_HELD_LOCKS = 1_000_000;
  /**
   * The connect timeout when none is set: 10 s, pgjdbc's own default. A login on a server or client
   * whose CPUs are busy can take seconds (2 s, the earlier default, failed on a loaded 2-core machine
   * where psql needed 0.5 s); latency-sensitive callers of {@code tryAcquire()} on a quiet network
   * may set less.
   */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
  /** The shortest connect timeout accepted. */
  public static final Duration MIN_CONNECT_TIMEOUT = Duration.ofMillis(100);
  /** The longest connect timeout accepted. */
  public static final Duration MAX_CONNECT_TIMEOUT = Duration.ofMinutes(5);

  private final DataSource dataSource;
  private String namespace;
  private String nodeName;
  private Duration lease;
  private int lockSessions = -1;
  private int waitSessions = -1;
  private int maxHeldLocks = -1;
  private int maxLocalHandoffs = -1;
  private Executor callbackExecutor;
  private Duration connectTimeout;
  private boolean transactionLocksOnly;
  private String schema;
  private boolean fencing;
  private boolean history;
  private Duration historyRetention;
  private PgLocksListener listener;

  PgLocksBuilder(DataSource dataSource) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
  }

  /**
   * The namespace names live in (default {@code "default"}): usually the service's name.
   *
   * @param namespace 1 to {@value LockKey#MAX_NAMESPACE_LENGTH} characters, no ':' and no
   *     whitespace or control characters
   * @return this builder
   */
  public PgLocksBuilder namespace(String namespace) {
    once(this.namespace, "namespace");
    this.namespace = LockKey.checkNamespace(namespace);
    return this;
  }

  /**
   * This node's name for operators (default {@code host-pid}), shown in
   * {@code pg_stat_activity.application_name} and in pglock's thread names.
   *
   * @param nodeName 1 to 40 printable ASCII characters
   * @return this builder
   */
  public PgLocksBuilder nodeName(String nodeName) {
    once(this.nodeName, "nodeName");
    if (nodeName == null || nodeName.isBlank() || nodeName.length() > 40
        || !nodeName.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
      throw new IllegalArgumentException("nodeName must be 1 to 40 printable ASCII characters: \"" + nodeName + "\"");
    }
    this.nodeName = nodeName;
    return this;
  }

  /**
   * The lease (default 30 s, from 1 s to 1 h): how long after its last successful round trip a
   * lock session may go before the server ends it and frees its locks. A paused or partitioned
   * holder loses its locks after this long, and a heartbeat every third of it keeps a healthy
   * session alive.
   *
   * @param lease from {@link #MIN_LEASE} to {@link #MAX_LEASE}
   * @return this builder
   */
  public PgLocksBuilder lease(Duration lease) {
    once(this.lease, "lease");
    Objects.requireNonNull(lease, "lease");
    if (lease.compareTo(MIN_LEASE) < 0 || lease.compareTo(MAX_LEASE) > 0) {
      throw new IllegalArgumentException("lease must be between " + MIN_LEASE + " and " + MAX_LEASE + ": " + lease);
    }
    this.lease = lease;
    return this;
  }

  /**
   * How many lock sessions carry held locks (default 1, at most 16). One handles thousands of locks.
   *
   * @param count from 1 to 16
   * @return this builder
   */
  public PgLocksBuilder lockSessions(int count) {
    onceInt(this.lockSessions, "lockSessions");
    this.lockSessions = range("lockSessions", count, 1, 16);
    return this;
  }

  /**
   * The most connections used at once for blocking waits on locks held by other processes
   * (default 2, from 0 to 64). A wait session holds the lock it waited for until the handle is
   * closed. Waiters beyond the bound poll with backoff instead.
   *
   * @param count from 0 (never more connections than the lock sessions) to 64
   * @return this builder
   */
  public PgLocksBuilder waitSessions(int count) {
    onceInt(this.waitSessions, "waitSessions");
    this.waitSessions = range("waitSessions", count, 0, 64);
    return this;
  }

  /**
   * The cap on server locks held at once. By default it is automatic: a quarter of the server's lock
   * table ({@code max_locks_per_transaction} × backends), at most {@value #DEFAULT_MAX_HELD_LOCKS},
   * so that pglock alone never fills it. A cap set here is honoured, with a warning in the log if it
   * is more than half of the server's lock table.
   *
   * @param max from 1 to {@value #MAX_MAX_HELD_LOCKS}
   * @return this builder
   */
  public PgLocksBuilder maxHeldLocks(int max) {
    onceInt(this.maxHeldLocks, "maxHeldLocks");
    this.maxHeldLocks = range("maxHeldLocks", max, 1, MAX_MAX_HELD_LOCKS);
    return this;
  }

  /**
   * How many times in a row a released lock may pass straight to a waiter in this process, without
   * a round trip, before it is released to the server so that other processes get their turn
   * (default 16; 0 disables local handoff).
   *
   * @param max from 0 to 1,000,000
   * @return this builder
   */
  public PgLocksBuilder maxLocalHandoffs(int max) {
    onceInt(this.maxLocalHandoffs, "maxLocalHandoffs");
    this.maxLocalHandoffs = range("maxLocalHandoffs", max, 0, 1_000_000);
    return this;
  }

  /**
   * The longest pglock waits for the network beyond a call's own timeout (default 10 s, from 100 ms
   * to 5 min): to open and set up a lock session (connect, login, setup statements), for the answer
   * to a try, and before giving up on a server that does not answer. Every public call returns
   * within its own timeout plus this bound, whatever the network does; a try without a timeout
   * returns within this bound. Sessions are opened on a background thread, so a slow connect never
   * holds up calls that do not need it.
   *
   * @param timeout from {@link #MIN_CONNECT_TIMEOUT} to {@link #MAX_CONNECT_TIMEOUT}
   * @return this builder
   */
  public PgLocksBuilder connectTimeout(Duration timeout) {
    once(this.connectTimeout, "connectTimeout");
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.compareTo(MIN_CONNECT_TIMEOUT) < 0 || timeout.compareTo(MAX_CONNECT_TIMEOUT) > 0) {
      throw new IllegalArgumentException("connectTimeout must be between " + MIN_CONNECT_TIMEOUT + " and "
          + MAX_CONNECT_TIMEOUT + ": " + timeout);
    }
    this.connectTimeout = timeout;
    return this;
  }

  /**
   * Where loss callbacks run (default: one pglock thread, so that they run in order). Callbacks that
   * the executor refuses, or that come after close, run on a fallback pglock thread.
   *
   * @param executor runs {@link LockHandle#onLoss} callbacks and {@link LockHandle#lost()} stages
   * @return this builder
   */
  public PgLocksBuilder callbackExecutor(Executor executor) {
    once(this.callbackExecutor, "callbackExecutor");
    this.callbackExecutor = Objects.requireNonNull(executor, "executor");
    return this;
  }

  /**
   * Builds an instance for transaction-scoped locks alone ({@link PgLocks#inTransaction}): it opens
   * no lock session, and {@link PgLocks#lock}, {@link PgLocks#readWriteLock} (and so
   * {@link WorkDistributor}) throw {@link UnsupportedOperationException}.
   *
   * <p>For a DataSource that reaches PostgreSQL only through a pooler in transaction mode (such as
   * PgBouncer's {@code pool_mode = transaction}): such a pooler hands a connection's backend to
   * other clients between transactions, so a session lock would be shared with strangers and is
   * refused, while a transaction lock ends with the transaction that took it and is safe. Without
   * this option, {@link #build()} refuses such a DataSource, since session locks could not work.
   *
   * @return this builder
   */
  public PgLocksBuilder transactionLocksOnly() {
    if (transactionLocksOnly) {
      throw new IllegalStateException("transactionLocksOnly was already set");
    }
    transactionLocksOnly = true;
    return this;
  }

  /**
   * The schema of pglock's database objects (default {@value PgLockSchema#DEFAULT_SCHEMA}), as
   * installed by {@link PgLockSchema#migrate(javax.sql.DataSource, String)}: fencing tokens use it.
   * Session and transaction locks need no schema.
   *
   * @param schema a lower-case SQL identifier: letters, digits and '_', at most 63 characters
   * @return this builder
   */
  public PgLocksBuilder schema(String schema) {
    once(this.schema, "schema");
    this.schema = io.pglock.internal.schema.SchemaMigrator.checkSchema(schema);
    return this;
  }

  /**
   * Every exclusive session lock of the instance comes with a fencing token
   * ({@link LockHandle#fencingToken()}): a number that strictly increases with every grant of that
   * lock, taken in the same statement as the grant. Without this option,
   * {@link SessionLock#withFencing()} asks for tokens per lock. Needs the schema at version 2 or
   * later ({@link PgLockSchema#migrate}); {@link #build()} checks it. See {@code docs/fencing.md}.
   *
   * @return this builder
   */
  public PgLocksBuilder fencing() {
    if (fencing) {
      throw new IllegalStateException("fencing was already set");
    }
    fencing = true;
    return this;
  }

  /**
   * Every {@link SessionLock#run(Duration, LockedWork)} of the instance records its hold in the lock
   * history ({@code <schema>.history}): who held the lock, when, and how the hold ended (released,
   * the work failed and with what, the lock lost), written in batches off the caller's path. Without
   * this option, {@link SessionLock#withHistory()} asks for it per lock. Needs the schema at version 4
   * or later ({@link PgLockSchema#migrate}); {@link #build()} checks it. See {@code docs/history.md}.
   *
   * @return this builder
   */
  public PgLocksBuilder history() {
    if (history) {
      throw new IllegalStateException("history was already set");
    }
    history = true;
    return this;
  }

  /**
   * How long the lock history keeps a hold after it ended (default 30 days, from 1 minute to 10
   * years); older holds are pruned in small batches by every instance that writes history.
   *
   * @param retention how long to keep ended holds
   * @return this builder
   */
  public PgLocksBuilder historyRetention(Duration retention) {
    once(this.historyRetention, "historyRetention");
    Objects.requireNonNull(retention, "retention");
    if (retention.compareTo(Duration.ofMinutes(1)) < 0 || retention.compareTo(Duration.ofDays(3653)) > 0) {
      throw new IllegalArgumentException("historyRetention must be between PT1M and 3653 days: " + retention);
    }
    this.historyRetention = retention;
    return this;
  }

  /**
   * The listener that hears acquire attempts, lost locks and changes of leadership, for metrics
   * (default none: then pglock pays one null check per event). It must be quick and thread-safe; what
   * it throws is caught and logged. See {@link PgLocksListener}, and {@code pglock-micrometer}'s
   * {@code PgLocksMetrics} for Micrometer meters.
   *
   * @param listener the listener
   * @return this builder
   */
  public PgLocksBuilder listener(PgLocksListener listener) {
    once(this.listener, "listener");
    this.listener = Objects.requireNonNull(listener, "listener");
    return this;
  }

  /**
   * Checks the database (PostgreSQL 14 or newer, not behind a transaction-mode pooler) by opening
   * the first lock session, and returns the running instance. With {@link #transactionLocksOnly()}
   * it checks on one connection (PostgreSQL 14 or newer, any pooler) and opens no lock session.
   * Returns within {@link #connectTimeout(Duration) connectTimeout} for each connection it opens.
   *
   * @return the running instance; close it on shutdown
   * @throws UnsupportedDatabaseException if the database cannot carry session locks (the message
   *     names the fix: a direct connection, or {@link #transactionLocksOnly()})
   * @throws LockSessionException if the database cannot be reached
   * @throws SchemaMissingException with {@link #fencing()} or {@link #history()}, if the schema lacks
   *     what they need
   */
  public PgLocks build() {
    PgLocksConfig config = new PgLocksConfig(dataSource,
        namespace != null ? namespace : "default",
        nodeName != null ? nodeName : defaultNodeName(),
        lease != null ? lease : DEFAULT_LEASE,
        lockSessions >= 0 ? lockSessions : 1,
        waitSessions >= 0 ? waitSessions : 2,
        Math.max(maxHeldLocks, 0),
        maxLocalHandoffs >= 0 ? maxLocalHandoffs : 16,
        callbackExecutor,
        connectTimeout != null ? connectTimeout : DEFAULT_CONNECT_TIMEOUT,
        transactionLocksOnly,
        schema != null ? schema : PgLockSchema.DEFAULT_SCHEMA,
        fencing,
        history,
        historyRetention != null ? historyRetention : Duration.ofDays(30),
        listener);
    return DefaultPgLocks.start(config);
  }

  private static String defaultNodeName() {
    String jvm = ManagementFactory.getRuntimeMXBean().getName(); // pid@host
    int at = jvm.indexOf('@');
    String name = at > 0 ? jvm.substring(at + 1) + "-" + jvm.substring(0, at) : jvm;
    name = name.replaceAll("[^\\x20-\\x7e]", "?");
    return name.length() > 40 ? name.substring(name.length() - 40) : name;
  }

  private static void once(Object current, String option) {
    if (current != null) {
      throw new IllegalStateException(option + " was already set to " + current);
    }
  }

  private static void onceInt(int current, String option) {
    if (current >= 0) {
      throw new IllegalStateException(option + " was already set to " + current);
    }
  }

  private static int range(String option, int value, int min, int max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(option + " must be between " + min + " and " + max + ": " + value);
    }
    return value;
  }
}
