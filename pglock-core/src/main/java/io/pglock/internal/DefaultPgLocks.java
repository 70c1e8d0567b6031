package io.pglock.internal;

import io.pglock.LockKey;
import io.pglock.LockMode;
import io.pglock.PgLocks;
import io.pglock.LeasedSession;
import io.pglock.PgLocksClosedException;
import io.pglock.PgLocksConfig;
import io.pglock.SessionLock;
import io.pglock.SessionReadWriteLock;
import io.pglock.SessionSemaphore;
import io.pglock.TransactionLocks;
import io.pglock.internal.recording.HistoryWriter;
import io.pglock.internal.recording.NameRecorder;
import java.sql.Connection;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The running {@link PgLocks}: owns the sessions, the lock table and the background threads. */
public final class DefaultPgLocks implements PgLocks {
  private static final Logger log = LoggerFactory.getLogger(DefaultPgLocks.class);

  private final PgLocksConfig config;
  private final ScheduledExecutorService watchdog;
  private final Callbacks callbacks;
  private final Sessions sessions;
  private final LockTable table;
  private final AtomicBoolean closed = new AtomicBoolean();
  /** Whether the schema had the fencing functions at build. */
  private volatile boolean fencingInstalled;
  /** Records names of keys for the views; null when the schema does not record them. */
  private volatile NameRecorder names;
  /** Whether the schema had the history table at build. */
  private volatile boolean historyInstalled;
  /** Writes the lock history; started by the first run that records. Guarded by {@code this}. */
  private HistoryWriter history;

  private DefaultPgLocks(PgLocksConfig config, LeaseClock clock) {
    this.config = config;
    ScheduledThreadPoolExecutor w = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = Executors.defaultThreadFactory().newThread(r);
      t.setName("pglock-" + config.nodeName() + "-watchdog");
      t.setDaemon(true);
      return t;
    });
    w.setRemoveOnCancelPolicy(true);
    // After close, lease checks (one-shot) are dropped, but a transaction-lock wait on the caller's
    // own connection stays interruptible: its periodic interrupt check goes on until the wait ends.
    w.setContinueExistingPeriodicTasksAfterShutdownPolicy(true);
    w.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    this.watchdog = w;
    this.callbacks = new Callbacks(config.callbackExecutor(), config.nodeName());
    this.sessions = new Sessions(config, watchdog, clock);
    this.table = new LockTable(config, sessions, callbacks);
    this.sessions.listener(table);
  }

  /**
   * Starts an instance and opens its first lock session, which checks the database.
   *
   * @throws io.pglock.UnsupportedDatabaseException if the database cannot carry session locks
   * @throws io.pglock.LockSessionException if the database cannot be reached
   */
  public static PgLocks start(PgLocksConfig config) {
    return start(config, LeaseClock.SYSTEM);
  }

  /** Starts an instance whose leases read the given clocks. */
  static PgLocks start(PgLocksConfig config, LeaseClock clock) {
    DefaultPgLocks locks = new DefaultPgLocks(config, clock);
    try {
      if (config.transactionLocksOnly()) {
        if (config.fencing() || config.history()) {
          throw new IllegalStateException((config.fencing() ? "fencing" : "history") + " and transactionLocksOnly "
              + "cannot go together: it comes with session locks, which an instance for transaction locks alone "
              + "refuses");
        }
        locks.startNames(locks.sessions.checkDatabase());
        locks.table.cap(0);
      } else {
        SessionSetup.Probe probe = locks.sessions.openFirst();
        locks.table.cap(capFor(config, probe.lockTable()));
        locks.fencingInstalled = probe.fencingInstalled();
        locks.startNames(probe.namesInstalled());
        locks.historyInstalled = probe.historyInstalled();
        if (config.fencing()) {
          locks.ensureFencing();
        }
        if (config.history()) {
          locks.ensureHistory();
        }
      }
    } catch (RuntimeException e) {
      locks.close();
      throw e;
    }
    log.debug("started {}", config);
    return locks;
  }

  /** The cap in force: the configured one, or a quarter of the server's lock table, at most 2,000. */
  static int capFor(PgLocksConfig config, int serverLockTable) {
    if (config.maxHeldLocks() == 0) {
      return Math.max(1, Math.min(io.pglock.PgLocksBuilder.DEFAULT_MAX_HELD_LOCKS, serverLockTable / 4));
    }
    if (config.maxHeldLocks() > serverLockTable / 2) {
      log.warn("maxHeldLocks {} is more than half of the server's lock table (about {} entries, shared by "
          + "every client): if it fills, the server refuses new connections and most queries", config.maxHeldLocks(),
          serverLockTable);
    }
    return config.maxHeldLocks();
  }

  void ensureOpen() {
    if (closed.get()) {
      throw new PgLocksClosedException("this PgLocks (namespace " + config.namespace() + ", node "
          + config.nodeName() + ") is closed; build a new one");
    }
  }

  private void ensureSessionLocks() {
    if (config.transactionLocksOnly()) {
      throw new UnsupportedOperationException("this PgLocks (namespace " + config.namespace() + ") was built with "
          + "transactionLocksOnly(), so it has no lock session and refuses session locks; use "
          + "inTransaction(connection), or build another PgLocks without transactionLocksOnly() on a DataSource "
          + "that reaches PostgreSQL directly or through a session-mode pool");
    }
  }

  private void startNames(boolean installed) {
    if (installed) {
      names = NameRecorder.start(config, table::heldNames);
    }
  }

  /** Notes a transaction lock granted here, whose name is recorded in the background if it is held a while. */
  void recordTransactionLockName(LockKey key) {
    NameRecorder r = names;
    if (r != null) {
      r.heldInTransaction(key);
    }
  }

  /**
   * Notes a blocking acquire that begins, whose name is recorded in the background if it waits a while.
   *
   * @return the note to end when the acquire returns, or null
   */
  NameRecorder.Wait waitBegins(LockKey key) {
    NameRecorder r = names;
    return r == null ? null : r.waiting(key);
  }

  /**
   * @throws io.pglock.SchemaMissingException if the schema had no history table at build
   */
  void ensureHistory() {
    ensureInstalled(historyInstalled, "the lock history needs", 4, "V4__lock_history.sql");
  }

  /** The history writer, started on first use. */
  synchronized HistoryWriter history() {
    if (history == null) {
      ensureOpen(); // after close() no writer starts: close() only stops the one it saw
      history = HistoryWriter.start(config);
    }
    return history;
  }

  /**
   * @throws io.pglock.SchemaMissingException if the schema had no fencing functions at build
   */
  void ensureFencing() {
    ensureInstalled(fencingInstalled, "fencing tokens need", 5, "V5__fencing_sequence.sql");
  }

  private void ensureInstalled(boolean installed, String capabilityNeeds, int version, String file) {
    if (!installed) {
      throw new io.pglock.SchemaMissingException(capabilityNeeds + " pglock's schema \"" + config.schema()
          + "\" at version " + version + " or later, which this database lacks or this role may not use (checked at "
          + "build): run PgLockSchema.migrate(dataSource, \"" + config.schema() + "\") once, or apply the files "
          + "under io/pglock/schema/ up to " + file + " with Flyway or Liquibase, then build the PgLocks again");
    }
  }

  ScheduledExecutorService watchdog() {
    return watchdog;
  }

  LockTable table() {
    return table;
  }

  /** The user's listener behind a guard (it never throws), or null when none was set. */
  io.pglock.PgLocksListener listener() {
    return table.listener();
  }

  @Override
  public PgLocksConfig config() {
    return config;
  }

  @Override
  public LockKey key(String name) {
    return LockKey.named(config.namespace(), name);
  }

  @Override
  public SessionLock lock(String name) {
    return lock(key(name));
  }

  @Override
  public SessionLock lock(LockKey key) {
    ensureOpen();
    ensureSessionLocks();
    return new DefaultSessionLock(this, java.util.Objects.requireNonNull(key, "key"), LockMode.EXCLUSIVE,
        config.fencing(), config.history());
  }

  @Override
  public SessionReadWriteLock readWriteLock(String name) {
    return readWriteLock(key(name));
  }

  @Override
  public SessionReadWriteLock readWriteLock(LockKey key) {
    ensureOpen();
    ensureSessionLocks();
    java.util.Objects.requireNonNull(key, "key");
    SessionLock read = new DefaultSessionLock(this, key, LockMode.SHARED, false, config.history());
    SessionLock write = new DefaultSessionLock(this, key, LockMode.EXCLUSIVE, config.fencing(), config.history());
    return new SessionReadWriteLock() {
      @Override
      public LockKey key() {
        return key;
      }

      @Override
      public SessionLock readLock() {
        return read;
      }

      @Override
      public SessionLock writeLock() {
        return write;
      }

      @Override
      public String toString() {
        return "SessionReadWriteLock[" + key + "]";
      }
    };
  }

  @Override
  public SessionSemaphore semaphore(String name, int permits) {
    return new DefaultSessionSemaphore(this, name, permits);
  }

  @Override
  public TransactionLocks inTransaction(Connection connection) {
    ensureOpen();
    return new DefaultTransactionLocks(this, connection);
  }

  @Override
  public LeasedSession leasedSession(String role) {
    ensureOpen();
    ensureSessionLocks();
    if (role == null || role.isEmpty() || role.length() > 16 || !role.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != ':')) {
      throw new IllegalArgumentException("a leased session's role must be 1 to 16 printable ASCII characters without "
          + "spaces or ':' (it goes into application_name), got: " + role);
    }
    return DefaultLeasedSession.open(config, role);
  }

  @Override
  public int heldLocks() {
    return table.heldLocks();
  }

  @Override
  public int maxHeldLocks() {
    return table.cap();
  }

  @Override
  public int openSessions() {
    return sessions.openCount();
  }

  @Override
  public java.util.Optional<java.time.Duration> leaseMargin() {
    return sessions == null ? java.util.Optional.empty() : sessions.leaseMargin();
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    long deadline = System.nanoTime() + config.connectTimeout().toNanos();
    HistoryWriter h;
    synchronized (this) {
      h = history;
    }
    NameRecorder r = names;
    if (h != null) {
      h.beginClose(); // its last batch goes out while the sessions close
    }
    if (r != null) {
      r.beginClose();
    }
    table.closeAll();
    // Bounded like every other call: an orderly close within the connect timeout, else an abort.
    sessions.closeAll(deadline);
    watchdog.shutdown();
    callbacks.shutdown();
    if (h != null && !h.awaitClosed(deadline)) {
      log.debug("the lock history's last batch was still being written when close() returned");
    }
    if (r != null && !r.awaitClosed(deadline)) {
      log.debug("the last batch of lock names was still being written when close() returned");
    }
  }

  @Override
  public String toString() {
    return "PgLocks[namespace=" + config.namespace() + ", node=" + config.nodeName() + ", held=" + heldLocks()
        + (closed.get() ? ", closed" : "") + "]";
  }
}
