package io.pglock.queue.internal;

import io.pglock.queue.WorkerConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/** What both claiming modes share: the parameters of the statements, and reading what they return. */
abstract class StatementClaims implements Claims {
  final JobSql sql;
  final WorkerConfig config;
  final String node;
  final long keyBase;
  final String[] kinds;
  private final String[] limitKinds;
  private final Integer[] limitValues;

  /**
   * Put in front of a statement whose transaction decides who runs a job (a claim, an outcome, a
   * lease renewal, a rescue), in the same round trip, so that both run in one transaction: its commit
   * then waits for the WAL to reach the disk even where the server, the role or the session says
   * {@code synchronous_commit = off}. A claim undone by a crash after its commit was acknowledged
   * would hand out the same attempt number (the job's fencing token) twice, and a lease renewal undone
   * would let another worker take a job whose handler still believes it owns it. Only {@code off} is
   * raised (to {@code on}); {@code local}, {@code remote_write} and {@code remote_apply} stand. For
   * this transaction only: a pooled connection goes back as it came. A transaction that wrote nothing
   * (a claim that found no job, a heartbeat of the advisory mode) has no commit record to wait for,
   * so an idle worker pays nothing.
   */
  static final String DURABLE = "SELECT set_config('synchronous_commit', CASE current_setting('synchronous_commit')"
      + " WHEN 'off' THEN 'on' ELSE current_setting('synchronous_commit') END, true);\n";

  /**
   * Executes a statement built as {@link #DURABLE} followed by one or more statements, and moves past
   * {@code DURABLE}'s own result: the first statement's result is then the current one.
   *
   * @return true if the current result is a result set, as {@link PreparedStatement#execute()} says
   */
  static boolean executeDurable(PreparedStatement ps) throws SQLException {
    ps.execute(); // set_config's row
    return ps.getMoreResults();
  }

  /** Executes {@link #DURABLE} + a query and returns the query's rows. */
  static ResultSet queryDurable(PreparedStatement ps) throws SQLException {
    if (!executeDurable(ps)) {
      throw new SQLException("the statement after set_config returned no rows");
    }
    return ps.getResultSet();
  }

  StatementClaims(DefaultJobQueue jobs, WorkerConfig config) {
    this.sql = jobs.sql();
    this.config = config;
    this.node = jobs.locks().config().nodeName();
    this.keyBase = jobs.keyBase();
    this.kinds = config.handlers().keySet().toArray(new String[0]);
    Map<String, Integer> limits = config.maxAttempts();
    this.limitKinds = limits.keySet().toArray(new String[0]);
    this.limitValues = limits.values().toArray(new Integer[0]);
  }

  /**
   * Binds the outcome arrays (each with the owner it was claimed under, and whether its row goes at
   * once: its state's retention is zero), from index i. @return the next index
   */
  int bindOutcomes(Connection c, PreparedStatement ps, int i, List<Outcome> outcomes) throws SQLException {
    int n = outcomes.size();
    Long[] id = new Long[n];
    Integer[] attempt = new Integer[n];
    String[] state = new String[n];
    Long[] delay = new Long[n];
    String[] eclass = new String[n];
    String[] emsg = new String[n];
    String[] estack = new String[n];
    Long[] owner = new Long[n];
    Boolean[] purge = new Boolean[n];
    for (int k = 0; k < n; k++) {
      Outcome o = outcomes.get(k);
      id[k] = o.id();
      attempt[k] = o.attempt();
      state[k] = o.state();
      delay[k] = o.delayMillis();
      eclass[k] = o.errorClass();
      emsg[k] = o.errorMessage();
      estack[k] = o.errorStack();
      owner[k] = o.owner();
      purge[k] = purged(config, o.state());
    }
    ps.setArray(i++, c.createArrayOf("int8", id));
    ps.setArray(i++, c.createArrayOf("int4", attempt));
    ps.setArray(i++, c.createArrayOf("text", state));
    ps.setArray(i++, c.createArrayOf("int8", delay));
    ps.setArray(i++, c.createArrayOf("text", eclass));
    ps.setArray(i++, c.createArrayOf("text", emsg));
    ps.setArray(i++, c.createArrayOf("text", estack));
    ps.setArray(i++, c.createArrayOf("int8", owner));
    ps.setArray(i++, c.createArrayOf("bool", purge));
    return i;
  }

  /** {@return whether a job that ends in this state is deleted at once: the worker keeps it for no time} */
  static boolean purged(WorkerConfig config, String state) {
    return switch (state) {
      case "succeeded", "cancelled" -> config.retention().isZero();
      case "discarded" -> config.discardedRetention().isZero();
      default -> false; // retryable, released: the job goes on
    };
  }

  /** Binds the candidate selection's parameters (queue, kinds) from index i. @return the next index */
  int bindCandidates(Connection c, PreparedStatement ps, int i) throws SQLException {
    ps.setString(i++, config.queue());
    ps.setArray(i++, c.createArrayOf("text", kinds));
    return i;
  }

  /**
   * Binds what a claim sets: the owner, the node, and the max attempts per kind (fixed in the row at
   * its first claim). @return the next index
   */
  int bindClaimed(Connection c, PreparedStatement ps, int i, long owner) throws SQLException {
    ps.setLong(i++, owner);
    ps.setString(i++, node);
    ps.setArray(i++, c.createArrayOf("text", limitKinds));
    ps.setArray(i++, c.createArrayOf("int4", limitValues));
    ps.setInt(i++, config.defaultMaxAttempts());
    return i;
  }

  /** Binds the "back to available" part of a rescue: the message and the node that found the job. */
  int bindBack(Connection c, PreparedStatement ps, int i, String message) throws SQLException {
    ps.setString(i++, message);
    ps.setString(i++, node);
    return i;
  }

  static List<Claimed> readClaimed(ResultSet rs, long owner) throws SQLException {
    List<Claimed> claimed = new ArrayList<>();
    while (rs.next()) {
      long id = rs.getLong(1);
      if (rs.wasNull()) {
        continue; // the advisory claim's one row when nothing was taken
      }
      int max = rs.getInt(5);
      Integer maxAttempts = rs.wasNull() ? null : max;
      Long slot = null;
      if (rs.getMetaData().getColumnCount() >= 9) { // the keyed claim's slot lock, after the trace context
        long k = rs.getLong(9);
        slot = rs.wasNull() ? null : k;
      }
      claimed.add(new Claimed(id, rs.getString(2), rs.getString(3), rs.getInt(4), maxAttempts, rs.getBoolean(6),
          slot, owner, rs.getString(8)));
    }
    return claimed;
  }

  int prune(Connection c, int batch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql.prune)) {
      long kept = config.retention().toMillis();
      long discarded = config.discardedRetention().toMillis();
      ps.setString(1, config.queue());
      ps.setLong(2, kept);
      ps.setLong(3, discarded);
      ps.setLong(4, discarded);
      ps.setLong(5, kept);
      ps.setInt(6, batch);
      return ps.executeUpdate();
    }
  }

  static Long[] ids(Collection<Long> ids) {
    return ids.toArray(new Long[0]);
  }
}
