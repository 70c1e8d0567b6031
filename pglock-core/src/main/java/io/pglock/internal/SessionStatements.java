package io.pglock.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.postgresql.PGConnection;

/**
 * The statements a lock session sends, over its one connection: plain JDBC, no policy. Errors are
 * thrown to {@link LockSession}, which decides what they mean. Not thread-safe: only the thread
 * talking to the session uses it.
 */
final class SessionStatements {
  /** Prepared statements kept per batch shape; a session sees only a handful of shapes. */
  private static final int MAX_SHAPES = 64;

  private final BorrowedConnection borrowed;
  private final Connection connection;
  private final PreparedStatement arrays;
  /** {@link Sql#fencedBatch}, prepared when a large batch first has a fenced try. */
  private PreparedStatement fencedArrays;
  private final String schema;
  private final Map<Integer, PreparedStatement> shaped = new HashMap<>();
  /** Every this many probes, a full look (a message may sit in pgjdbc's own buffer). */
  private static final int FULL_PROBE_EVERY = 25;
  private final PendingBytes pending;
  private int probes;
  /** A look read a message: the connection's end that may follow it shows only on a full look. */
  private boolean fullLookNext;

  SessionStatements(BorrowedConnection borrowed, String schema) throws SQLException {
    this.borrowed = borrowed;
    this.schema = schema;
    this.connection = borrowed.connection;
    this.arrays = connection.prepareStatement(Sql.BATCH);
    this.pending = PendingBytes.of(connection);
  }

  /**
   * Runs try-locks and unlocks as one statement, in order; one answer per op: 1 or 0 (granted or
   * not; for an unlock, whether the server held the lock), and for a fenced try the token, 0 if not
   * granted.
   */
  long[] run(List<Op> ops) throws SQLException {
    return ops.size() <= Sql.MAX_SHAPED ? runShaped(ops) : runArrays(ops);
  }

  /** The code of an op in {@link Sql#shaped}: its function, and the key space in the low bit. */
  private static int code(Op op) {
    return (op.fenced ? Sql.TRY_FENCED : op.action) * 2 + op.key.objsubid() - 1;
  }

  /** A small batch: one row of function calls, prepared once per shape and kept. */
  private long[] runShaped(List<Op> ops) throws SQLException {
    int n = ops.size();
    int shape = n;
    int[] codes = new int[n];
    for (int i = 0; i < n; i++) {
      codes[i] = code(ops.get(i));
      shape = shape * 10 + codes[i]; // codes are 0..9: 8 ops and their count fit an int in base 10
    }
    PreparedStatement ps = shaped.get(shape);
    boolean keep = ps != null || shaped.size() < MAX_SHAPES;
    if (ps == null) {
      ps = connection.prepareStatement(Sql.shaped(codes, schema));
      if (keep) {
        shaped.put(shape, ps);
      }
    }
    try {
      int p = 1;
      for (Op op : ops) {
        ps.setLong(p++, op.key.firstArg());
        if (op.key.objsubid() == 2) {
          ps.setInt(p++, op.key.secondArg());
        }
      }
      long[] results = new long[n];
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        for (int i = 0; i < n; i++) {
          results[i] = ops.get(i).fenced ? rs.getLong(i + 1) : rs.getBoolean(i + 1) ? 1 : 0;
        }
      }
      return results;
    } finally {
      if (!keep) {
        ps.close();
      }
    }
  }

  /** A large batch: one statement over arrays, evaluated in array order. */
  private long[] runArrays(List<Op> ops) throws SQLException {
    int n = ops.size();
    short[] actions = new short[n];
    short[] spaces = new short[n];
    long[] firsts = new long[n];
    int[] seconds = new int[n];
    boolean fenced = false;
    for (int i = 0; i < n; i++) {
      Op op = ops.get(i);
      actions[i] = (short) (op.fenced ? Sql.TRY_FENCED : op.action);
      fenced |= op.fenced;
      spaces[i] = (short) op.key.objsubid();
      firsts[i] = op.key.firstArg();
      seconds[i] = op.key.secondArg();
    }
    PreparedStatement ps = arrays;
    if (fenced) {
      if (fencedArrays == null) {
        fencedArrays = connection.prepareStatement(Sql.fencedBatch(schema));
      }
      ps = fencedArrays;
    }
    ps.setObject(1, actions);
    ps.setObject(2, spaces);
    ps.setObject(3, firsts);
    ps.setObject(4, seconds);
    long[] results = new long[n];
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        results[rs.getInt(1) - 1] = fenced ? rs.getLong(2) : rs.getBoolean(2) ? 1 : 0;
      }
    }
    return results;
  }

  /** Sets the bound of the next blocking wait. */
  void setLockTimeout(long millis) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(Sql.SET_LOCK_TIMEOUT)) {
      ps.setString(1, millis + "ms");
      ps.execute();
    }
  }

  /**
   * Blocks until the server grants the lock, or throws (55P03 on lock_timeout, 57014 on cancel).
   *
   * @return the fencing token that came with the grant if fenced, else 1
   */
  long waitLock(ServerKey key, boolean shared, boolean fenced) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(fenced ? Sql.lockFenced(key, schema)
        : Sql.lock(key, shared))) {
      ps.setLong(1, key.firstArg());
      if (key.objsubid() == 2) {
        ps.setInt(2, key.secondArg());
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return fenced ? rs.getLong(1) : 1;
      }
    }
  }

  /** Whether this backend holds the lock, according to pg_locks. */
  boolean holds(ServerKey key, boolean shared) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(Sql.HOLDS)) {
      ps.setLong(1, key.classid());
      ps.setLong(2, key.objid());
      ps.setInt(3, key.objsubid());
      ps.setString(4, shared ? "ShareLock" : "ExclusiveLock");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) > 0;
      }
    }
  }

  /** Whether an exclusive request for the key waits on the server (any backend). */
  boolean exclusiveWaiting(ServerKey key) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(Sql.EXCLUSIVE_WAITING)) {
      ps.setLong(1, key.classid());
      ps.setLong(2, key.objid());
      ps.setInt(3, key.objsubid());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  /** The backend's pid: the heartbeat. */
  int backendPid() throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(Sql.BACKEND_PID); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** Asks the server, over a new connection, to cancel the statement in flight. */
  void cancel() throws SQLException {
    connection.unwrap(PGConnection.class).cancelQuery();
  }

  /**
   * Bounds every later read on the connection: an orderly close must not wait for a network that
   * does not answer longer than the close's own deadline.
   */
  void boundNetwork(int millis) throws SQLException {
    connection.setNetworkTimeout(Runnable::run, Math.max(1, millis));
  }

  /**
   * Looks for a message the server sent on its own (a FATAL error before it closes the connection)
   * without sending anything: asks the kernel whether bytes are waiting ({@link PendingBytes}), and
   * reads them (waiting at most a millisecond) if so, or every {@value #FULL_PROBE_EVERY}th time.
   *
   * @throws SQLException carrying the server's error, or the connection failure, if there is one
   */
  void probe() throws SQLException {
    if (++probes % FULL_PROBE_EVERY != 0 && !fullLookNext && !pending.maybe()) {
      return;
    }
    fullLookNext = false;
    connection.unwrap(PGConnection.class).getNotifications(1);
    java.sql.SQLWarning warning = connection.getWarnings();
    if (warning != null) {
      connection.clearWarnings();
      fullLookNext = true;
      for (java.sql.SQLWarning w = warning; w != null; w = w.getNextWarning()) {
        // A server shut down in immediate mode or crashing (a primary killed before a failover) says
        // so as a WARNING (57P01, 57P02) before the socket closes, not as a FATAL error: the session
        // ends now, not at the next full look or heartbeat.
        if (w.getSQLState() != null && w.getSQLState().startsWith("57P")) {
          throw new SQLException("the server is shutting down: " + w.getMessage(), "08006", w);
        }
      }
    }
  }

  /**
   * Orderly end: frees every lock of the backend, puts back every setting pglock changed and closes
   * the connection, which returns it clean to a pool ({@link BorrowedConnection#giveBack()}).
   */
  void unlockAllAndGiveBack() throws SQLException {
    for (PreparedStatement ps : shaped.values()) {
      ps.close();
    }
    arrays.close();
    if (fencedArrays != null) {
      fencedArrays.close();
    }
    borrowed.giveBack();
  }

  /**
   * Drops the connection at once: the server frees every lock on it, and a pool discards it
   * ({@link BorrowedConnection#discard()}).
   */
  void abort() {
    borrowed.discard();
  }
}
