package io.pglock.internal;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Every statement pglock-core sends, in one place. Values are always bound parameters. Public (with
 * the few statements the {@code recording} and {@code listing} sub-packages send) only for those
 * sub-packages of {@code io.pglock.internal}; not API.
 */
public final class Sql {
  private Sql() {}

  /**
   * The session settings a lock session changes, in the order of {@link #SETUP}'s parameters: each
   * is read before it is set, and put back by {@link #GIVE_BACK} (see {@link BorrowedConnection}).
   * {@code statement_timeout} and {@code lock_timeout} are cleared so that a role's or a pool's
   * defaults cannot cut a wait short; a wait sets its own {@code lock_timeout}. {@code synchronous_commit}
   * is off: the only writes of a lock session are fencing tokens, whose durability does not rest on
   * a disk flush per grant (see {@code V5__fencing_sequence.sql}). Every statement runs in read
   * committed, writable, whatever a role's or database's defaults say.
   */
  static final List<String> SESSION_SETTINGS = List.of("application_name", "idle_session_timeout",
      "tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count", "tcp_user_timeout",
      "client_connection_check_interval", "statement_timeout", "lock_timeout", "synchronous_commit",
      "default_transaction_isolation", "default_transaction_read_only");

  /**
   * Sets up a lock session and reads what the checks need. Columns 1 to n: the value of each of
   * {@link #SESSION_SETTINGS} before the change (PostgreSQL evaluates a target list left to right,
   * so every read comes before its set); then the new values, the backend pid, current_user,
   * current_database() and the backend's start (which, with the pid, names the backend for good). Parameters: the new values, in {@link #SESSION_SETTINGS} order.
   */
  static final String SETUP = "SELECT "
      + SESSION_SETTINGS.stream().map(n -> "current_setting('" + n + "')").collect(Collectors.joining(", "))
      + ", "
      + SESSION_SETTINGS.stream().map(n -> "set_config('" + n + "', ?, false)").collect(Collectors.joining(", "))
      + ", pg_backend_pid(), current_user, current_database(),"
      + " (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())";

  /** The column of {@link #SETUP} that holds the backend pid. */
  static final int SETUP_PID_COLUMN = 2 * SESSION_SETTINGS.size() + 1;

  /**
   * The orderly end of a lock session: frees every advisory lock the backend holds, then puts every
   * one of {@link #SESSION_SETTINGS} back. Parameters: the original values, in that order.
   */
  static final String GIVE_BACK = "SELECT pg_advisory_unlock_all(), "
      + SESSION_SETTINGS.stream().map(n -> "set_config('" + n + "', ?, false)").collect(Collectors.joining(", "));

  /**
   * Puts every one of {@link #SESSION_SETTINGS} back, and nothing else: the undo of a setup that
   * ran on a connection then refused. Parameters as {@link #GIVE_BACK}.
   */
  static final String RESTORE_SETTINGS = "SELECT "
      + SESSION_SETTINGS.stream().map(n -> "set_config('" + n + "', ?, false)").collect(Collectors.joining(", "));

  /**
   * The server's version number, e.g. 150020: checked before anything version-specific is set; and
   * whether it is in recovery (a standby), which is refused: in the same round trip.
   */
  static final String SERVER_VERSION = "SELECT current_setting('server_version_num')::int, pg_is_in_recovery()";

  /**
   * The probe of a second connection: its backend pid, and the size of the shared lock table,
   * {@code max_locks_per_transaction} times the backends it is sized for; and whether the schema
   * (parameter) has the fencing functions, records lock names, and keeps a lock history, as far as the
   * role may use it.
   */
  static final String PROBE = """
      WITH s AS (SELECT n.oid FROM pg_namespace n WHERE n.nspname = ? AND has_schema_privilege(n.oid, 'USAGE'))
      SELECT pg_backend_pid(),
             current_setting('max_locks_per_transaction')::int
             * (current_setting('max_connections')::int + current_setting('max_prepared_transactions')::int
                + current_setting('autovacuum_max_workers')::int + current_setting('max_worker_processes')::int
                + current_setting('max_wal_senders')::int + 1),
             EXISTS (SELECT 1 FROM pg_class c, s WHERE c.relnamespace = s.oid AND c.relname = 'fencing_token_seq')
               AND NOT EXISTS (SELECT 1 FROM pg_proc p, s WHERE p.pronamespace = s.oid
                                  AND p.proname IN ('try_lock_fenced', 'lock_fenced', 'next_fencing_token')
                                  AND NOT has_function_privilege(p.oid, 'EXECUTE')),
             EXISTS (SELECT 1 FROM pg_proc p, s WHERE p.pronamespace = s.oid AND p.proname = 'record_lock_names'),
             EXISTS (SELECT 1 FROM pg_class c, s WHERE c.relnamespace = s.oid AND c.relname = 'lock_history')""";

  /**
   * Whether the schema (parameter) has an object of this name, of the catalog's kind, that the role
   * may use. Read from the catalogs, which any role may: {@code to_regclass} on a schema without
   * USAGE fails rather than answering.
   */
  static String schemaHas(String catalog, String name) {
    String column = catalog.equals("pg_proc") ? "pronamespace" : "relnamespace";
    String nameColumn = catalog.equals("pg_proc") ? "proname" : "relname";
    return "SELECT EXISTS (SELECT 1 FROM pg_namespace n JOIN " + catalog + " o ON o." + column + " = n.oid "
        + "WHERE n.nspname = ? AND has_schema_privilege(n.oid, 'USAGE') AND o." + nameColumn + " = '" + name + "')";
  }

  /** Whether the schema (parameter) has the failover quarantine (version 14). */
  static final String QUARANTINE_INSTALLED = schemaHas("pg_proc", "lock_quarantine");

  /**
   * How many milliseconds a new lock session must wait before it takes a lock: the rest of a lease
   * since the server became primary (parameter: the lease, as an interval text).
   */
  static String quarantine(String schema) {
    return "SELECT " + schema + ".lock_quarantine(?::interval)";
  }

  /** Whether the schema (parameter) records lock names: read at build of an instance without a probe. */
  static final String NAMES_INSTALLED = schemaHas("pg_proc", "record_lock_names");

  /** Every row of the locks view, holders first, then waiters, each by key and pid. */
  public static String listLocks(String schema) {
    return "SELECT key, space, first, second, namespace, name, mode, granted, scope, pid, node, role, "
        + "application_name, host(client_addr) AS client_addr, username, since, blocked_by, holder_namespace FROM "
        + schema
        + ".locks ORDER BY granted DESC, space, key, pid";
  }

  /** Writes a batch of hold records; 14 array parameters, as {@code record_holds} takes them. */
  public static String recordHolds(String schema) {
    return "SELECT " + schema + ".record_holds(?, ?, ?, ?, ?, ?, ?::timestamptz[], ?::timestamptz[], "
        + "?::timestamptz[], ?, ?, ?, ?, ?)";
  }

  /** Closes the holds of dead holders and prunes old ones; parameters: before, limit. */
  public static String sweepHolds(String schema) {
    return "SELECT closed, pruned FROM " + schema + ".sweep_holds(?::timestamptz, ?)";
  }

  /** Records a batch of names; parameters: namespaces text[], names text[]. */
  public static String recordNames(String schema) {
    return "SELECT " + schema + ".record_lock_names(?, ?)";
  }

  /**
   * Records the names of a batch whose keys are locked now (schema version 10); parameters: keys
   * bigint[], namespaces text[], names text[].
   */
  public static String recordLockedNames(String schema) {
    return "SELECT " + schema + ".record_locked_names(?, ?, ?)";
  }

  /** Prunes the name table (schema version 10); parameters: retention (text, as interval), max rows, batch. */
  public static String pruneNames(String schema) {
    return "SELECT " + schema + ".prune_lock_names(?::interval, ?, ?)";
  }

  /** The backend pid: read at connect and on every heartbeat to catch a transaction-mode pooler. */
  static final String BACKEND_PID = "SELECT pg_backend_pid()";

  /**
   * One batch: try-locks and unlocks, run strictly in array order, one boolean per position.
   * Actions: 0 try exclusive, 1 try shared, 2 unlock exclusive, 3 unlock shared. Parameters:
   * actions smallint[], objsubid smallint[], first bigint[], second int[].
   */
  static final String BATCH = """
      SELECT t.n::int, CASE t.a
        WHEN 0 THEN CASE WHEN t.s = 1 THEN pg_try_advisory_lock(t.k) ELSE pg_try_advisory_lock(t.k::int, t.k2) END
        WHEN 1 THEN CASE WHEN t.s = 1 THEN pg_try_advisory_lock_shared(t.k)
                         ELSE pg_try_advisory_lock_shared(t.k::int, t.k2) END
        WHEN 2 THEN CASE WHEN t.s = 1 THEN pg_advisory_unlock(t.k) ELSE pg_advisory_unlock(t.k::int, t.k2) END
        ELSE CASE WHEN t.s = 1 THEN pg_advisory_unlock_shared(t.k) ELSE pg_advisory_unlock_shared(t.k::int, t.k2) END
        END
        FROM unnest(?::smallint[], ?::smallint[], ?::bigint[], ?::int[]) WITH ORDINALITY AS t(a, s, k, k2, n)""";

  /** The most ops a batch may have to run as a {@link #shaped} statement rather than over arrays. */
  static final int MAX_SHAPED = 8;

  private static final String[] FUNCTIONS = {
      "pg_try_advisory_lock", "pg_try_advisory_lock_shared", "pg_advisory_unlock", "pg_advisory_unlock_shared",
      ".try_lock_fenced"};

  /** The action code of a fenced exclusive try in {@link #shaped} and {@link #fencedBatch}. */
  static final int TRY_FENCED = 4;

  /**
   * A small batch as one row of function calls, e.g. {@code SELECT pg_advisory_unlock(?::bigint),
   * pg_try_advisory_lock(?::bigint)}: about half the server time of the array form. Each op is
   * {@code action * 2 + (objsubid - 1)}, the action {@link #TRY_FENCED} calling the schema's
   * {@code try_lock_fenced}, which answers with a token (0: not granted). PostgreSQL evaluates a
   * target list left to right; for ops on one key from one backend the order would not even matter,
   * since a backend never conflicts with itself.
   */
  static String shaped(int[] ops, String schema) {
    StringBuilder sql = new StringBuilder("SELECT ");
    for (int i = 0; i < ops.length; i++) {
      if (i > 0) {
        sql.append(", ");
      }
      if (ops[i] >> 1 == TRY_FENCED) {
        sql.append(schema);
      }
      sql.append(FUNCTIONS[ops[i] >> 1]).append((ops[i] & 1) == 0 ? "(?::bigint)" : "(?::int, ?::int)");
    }
    return sql.toString();
  }

  /**
   * {@link #BATCH} with fenced tries (action {@link #TRY_FENCED}): one bigint per position, 1 or 0
   * for the plain actions and the token (0: not granted) for a fenced try. A separate statement, so
   * that a batch without fencing never depends on the schema.
   */
  static String fencedBatch(String schema) {
    return """
        SELECT t.n::int, CASE t.a
          WHEN 0 THEN (CASE WHEN t.s = 1 THEN pg_try_advisory_lock(t.k) ELSE pg_try_advisory_lock(t.k::int, t.k2) END)::int
          WHEN 1 THEN (CASE WHEN t.s = 1 THEN pg_try_advisory_lock_shared(t.k)
                            ELSE pg_try_advisory_lock_shared(t.k::int, t.k2) END)::int
          WHEN 2 THEN (CASE WHEN t.s = 1 THEN pg_advisory_unlock(t.k) ELSE pg_advisory_unlock(t.k::int, t.k2) END)::int
          WHEN 3 THEN (CASE WHEN t.s = 1 THEN pg_advisory_unlock_shared(t.k)
                            ELSE pg_advisory_unlock_shared(t.k::int, t.k2) END)::int
          ELSE CASE WHEN t.s = 1 THEN %1$s.try_lock_fenced(t.k) ELSE %1$s.try_lock_fenced(t.k::int, t.k2) END
          END::bigint
          FROM unnest(?::smallint[], ?::smallint[], ?::bigint[], ?::int[]) WITH ORDINALITY AS t(a, s, k, k2, n)"""
        .formatted(schema);
  }

  /** A fenced blocking wait (bounded by lock_timeout): the token comes back with the grant. */
  static String lockFenced(ServerKey key, String schema) {
    return "SELECT " + schema + ".lock_fenced(" + (key.objsubid() == 1 ? "?::bigint)" : "?::int, ?::int)");
  }


  /** Sets the wait bound of the next blocking lock; parameter: a lock_timeout value such as "250ms". */
  static final String SET_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', ?, false)";

  static final String LOCK_INT64 = "SELECT pg_advisory_lock(?)";
  static final String LOCK_INT64_SHARED = "SELECT pg_advisory_lock_shared(?)";
  static final String LOCK_PAIR = "SELECT pg_advisory_lock(?::int, ?)";
  static final String LOCK_PAIR_SHARED = "SELECT pg_advisory_lock_shared(?::int, ?)";

  /** Whether this backend holds the lock: the re-check after a wait ended in an error. */
  static final String HOLDS = """
      SELECT count(*) FROM pg_locks
       WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND classid::bigint = ? AND objid::bigint = ? AND objsubid = ? AND mode = ?""";

  /**
   * Whether an exclusive request for a key waits on the server: asked before a local reader joins
   * a shared lock held here past the handoff cap, as PostgreSQL would refuse a remote reader then.
   */
  static final String EXCLUSIVE_WAITING = """
      SELECT EXISTS (SELECT 1 FROM pg_locks
       WHERE locktype = 'advisory' AND NOT granted AND mode = 'ExclusiveLock'
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND classid::bigint = ? AND objid::bigint = ? AND objsubid = ?)""";

  // Transaction-scoped locks on the caller's connection.
  static final String XACT_TRY_INT64 = "SELECT pg_try_advisory_xact_lock(?)";
  static final String XACT_TRY_INT64_SHARED = "SELECT pg_try_advisory_xact_lock_shared(?)";
  static final String XACT_TRY_PAIR = "SELECT pg_try_advisory_xact_lock(?::int, ?)";
  static final String XACT_TRY_PAIR_SHARED = "SELECT pg_try_advisory_xact_lock_shared(?::int, ?)";
  static final String XACT_LOCK_INT64 = "SELECT pg_advisory_xact_lock(?)";
  static final String XACT_LOCK_INT64_SHARED = "SELECT pg_advisory_xact_lock_shared(?)";
  static final String XACT_LOCK_PAIR = "SELECT pg_advisory_xact_lock(?::int, ?)";
  static final String XACT_LOCK_PAIR_SHARED = "SELECT pg_advisory_xact_lock_shared(?::int, ?)";
  static final String XACT_GET_LOCK_TIMEOUT = "SELECT current_setting('lock_timeout')";
  static final String XACT_SET_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', ?, true)";
  static final String SAVEPOINT = "SAVEPOINT pglock_wait";
  static final String ROLLBACK_TO_SAVEPOINT = "ROLLBACK TO SAVEPOINT pglock_wait";
  static final String RELEASE_SAVEPOINT = "RELEASE SAVEPOINT pglock_wait";

  static String lock(ServerKey key, boolean shared) {
    if (key.objsubid() == 1) {
      return shared ? LOCK_INT64_SHARED : LOCK_INT64;
    }
    return shared ? LOCK_PAIR_SHARED : LOCK_PAIR;
  }

  static String xactTry(ServerKey key, boolean shared) {
    if (key.objsubid() == 1) {
      return shared ? XACT_TRY_INT64_SHARED : XACT_TRY_INT64;
    }
    return shared ? XACT_TRY_PAIR_SHARED : XACT_TRY_PAIR;
  }

  static String xactLock(ServerKey key, boolean shared) {
    if (key.objsubid() == 1) {
      return shared ? XACT_LOCK_INT64_SHARED : XACT_LOCK_INT64;
    }
    return shared ? XACT_LOCK_PAIR_SHARED : XACT_LOCK_PAIR;
  }
}
