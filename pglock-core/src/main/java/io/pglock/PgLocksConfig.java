package io.pglock;

import java.time.Duration;
import java.util.concurrent.Executor;
import javax.sql.DataSource;

/** The settings of a {@link PgLocks}, as validated by {@link PgLocksBuilder}. Immutable. */
public final class PgLocksConfig {
  private final DataSource dataSource;
  private final String namespace;
  private final String nodeName;
  private final Duration lease;
  private final int lockSessions;
  private final int waitSessions;
  private final int maxHeldLocks;
  private final int maxLocalHandoffs;
  private final Executor callbackExecutor;
  private final Duration connectTimeout;
  private final boolean transactionLocksOnly;
  private final String schema;
  private final boolean fencing;
  private final boolean history;
  private final Duration historyRetention;
  private final PgLocksListener listener;

  PgLocksConfig(DataSource dataSource, String namespace, String nodeName, Duration lease, int lockSessions,
      int waitSessions, int maxHeldLocks, int maxLocalHandoffs, Executor callbackExecutor,
      Duration connectTimeout, boolean transactionLocksOnly, String schema, boolean fencing, boolean history,
      Duration historyRetention, PgLocksListener listener) {
    this.dataSource = dataSource;
    this.namespace = namespace;
    this.nodeName = nodeName;
    this.lease = lease;
    this.lockSessions = lockSessions;
    this.waitSessions = waitSessions;
    this.maxHeldLocks = maxHeldLocks;
    this.maxLocalHandoffs = maxLocalHandoffs;
    this.callbackExecutor = callbackExecutor;
    this.connectTimeout = connectTimeout;
    this.transactionLocksOnly = transactionLocksOnly;
    this.schema = schema;
    this.fencing = fencing;
    this.history = history;
    this.historyRetention = historyRetention;
    this.listener = listener;
  }

  /** {@return where lock sessions come from} */
  public DataSource dataSource() {
    return dataSource;
  }

  /** {@return the namespace of names} */
  public String namespace() {
    return namespace;
  }

  /** {@return this node's name, shown in {@code application_name} as {@code pglock:<node>}} */
  public String nodeName() {
    return nodeName;
  }

  /**
   * {@return the lease: {@code idle_session_timeout} and the other server-side timers of a lock
   * session}
   */
  public Duration lease() {
    return lease;
  }

  /** {@return how many lock sessions carry held locks (keys are spread over them by hash)} */
  public int lockSessions() {
    return lockSessions;
  }

  /** {@return the most connections used at once for blocking waits} */
  public int waitSessions() {
    return waitSessions;
  }

  /**
   * The cap on server locks held at once as set with the builder, or 0 if it is automatic; the cap
   * in force is {@link PgLocks#maxHeldLocks()}.
   *
   * @return the cap set, or 0
   */
  public int maxHeldLocks() {
    return maxHeldLocks;
  }

  /**
   * {@return how many times in a row a lock may pass between local holders before it goes back to
   * the server}
   */
  public int maxLocalHandoffs() {
    return maxLocalHandoffs;
  }

  /** {@return where loss callbacks run; null means pglock's own single callback thread} */
  public Executor callbackExecutor() {
    return callbackExecutor;
  }

  /**
   * The longest pglock waits for the network beyond a call's own timeout: to open and set up a
   * session, and for the answer to a try.
   *
   * @return the connect timeout
   */
  public Duration connectTimeout() {
    return connectTimeout;
  }

  /**
   * {@return true if the instance was built for transaction-scoped locks alone} See
   * {@link PgLocksBuilder#transactionLocksOnly()}: it opens no lock session and refuses session locks.
   */
  public boolean transactionLocksOnly() {
    return transactionLocksOnly;
  }

  /**
   * {@return the schema of pglock's database objects} See {@link PgLocksBuilder#schema(String)}: the
   * fencing functions live there.
   */
  public String schema() {
    return schema;
  }

  /**
   * {@return true if every exclusive session lock of the instance comes with a fencing token} See
   * {@link PgLocksBuilder#fencing()}; {@link SessionLock#withFencing()} asks for one per lock.
   */
  public boolean fencing() {
    return fencing;
  }

  /**
   * {@return true if every {@link SessionLock#run} of the instance records its hold} See
   * {@link PgLocksBuilder#history()}; {@link SessionLock#withHistory()} asks for it per lock.
   */
  public boolean history() {
    return history;
  }

  /** {@return how long the history keeps a hold after it ended} See {@link PgLocksBuilder#historyRetention}. */
  public Duration historyRetention() {
    return historyRetention;
  }

  /**
   * The listener set with {@link PgLocksBuilder#listener(PgLocksListener)}, as given (not guarded:
   * code that calls it must catch what it throws, as pglock does).
   *
   * @return the listener, or null if none was set
   */
  public PgLocksListener listener() {
    return listener;
  }

  @Override
  public String toString() {
    return "PgLocksConfig[namespace=" + namespace + ", node=" + nodeName + ", lease=" + lease
        + ", lockSessions=" + lockSessions + ", waitSessions=" + waitSessions + ", maxHeldLocks=" + maxHeldLocks
        + ", maxLocalHandoffs=" + maxLocalHandoffs + ", connectTimeout=" + connectTimeout
        + (transactionLocksOnly ? ", transactionLocksOnly" : "") + ", schema=" + schema
        + (fencing ? ", fencing" : "") + (history ? ", history (" + historyRetention + ")" : "")
        + (listener != null ? ", listener=" + listener : "") + "]";
  }
}
