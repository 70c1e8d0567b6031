package io.pglock.queue.internal;

/**
 * The queue's statements on one schema. Every value is a bound parameter; the schema name, checked
 * as an identifier by the core, is the only text put into them.
 *
 * <p>No statement joins {@code pg_locks}. Every lock function sits in a MATERIALIZED CTE whose rows
 * are exactly the rows to lock (the planner cannot call it on rows it then throws away), and a
 * candidate locked but not taken is unlocked in the same statement.
 */
final class JobSql {
  /**
   * Where a claim's limits go: written into the statement's text (numbers the worker computes, never
   * input), one statement per size. A bound LIMIT leaves the server's generic plan blind to how few
   * rows a claim takes (it plans a sequential scan and a sort); with the number in the text the
   * generic plan is the index scan, so after a few executions the server stops planning each claim.
   */
  static final String CANDIDATES = "{candidates}";
  static final String TAKE = "{take}";

  /** {@return the statement with its limits written in} */
  static String limited(String sql, int candidates, int take) {
    return sql.replace(CANDIDATES, Integer.toString(candidates)).replace(TAKE, Integer.toString(take));
  }

  /**
   * An outcome's row (alias j) is the outcome's (c): the same job, still running at the attempt under
   * the owner it was claimed under. The state is checked inside a CASE on purpose: written as
   * {@code j.state = 'running'} it would let the planner read the row through the partial index
   * {@code job_running}, and that index's row estimate is often near zero (statistics taken while
   * nothing ran): with it the server chose to scan every running row once per outcome (a nested loop
   * over the outcomes, 250-400 ms for a batch of 1,000 in B10). Written so, the only way to the row is
   * its primary key.
   */
  static final String OWNED_BY_C = "j.id = c.id AND j.attempt = c.attempt"
      + " AND CASE WHEN j.state = 'running' THEN j.owner END = c.owner";

  /** Running rows a rescue looks at per statement. */
  static final int RESCUE_BATCH = 1000;
  /**
   * Whether the job table has the column {@code trace_context} (schema version 11): if not, the
   * enqueue binds no trace context and the claims return a null in its place, so that a queue with no
   * tracing set runs on a schema at version 9 or 10.
   */
  final boolean traceColumn;
  final String enqueue;
  final String existingUnique;
  final String claimAdvisory;
  final String claimAdvisoryKeyed;
  final String claimAdvisoryOnly;
  final String claimLease;
  final String completeAdvisory;
  final String completeLease;
  final String cancelCheck;
  /** A transactional handler's success, in its own transaction: only while this attempt still owns the job. */
  final String succeedInTransaction;
  /** The same, for a worker that keeps no succeeded job (retention zero): the row is deleted. */
  final String purgeInTransaction;
  final String heartbeatLease;
  final String rescueAdvisory;
  final String rescueLease;
  final String prune;

  JobSql(String schema, boolean traceColumn) {
    String job = schema + ".job";
    this.traceColumn = traceColumn;
    // The trace context, when the column is there, is one parameter for the whole statement (every job
    // of an enqueue call carries the same), and the first one: it comes before the arrays in the text.
    enqueue = "WITH ins AS ("
        + " INSERT INTO " + job + " (queue, kind, payload, priority, run_at, max_attempts, unique_key, concurrency_key"
        + (traceColumn ? ", trace_context" : "") + ")"
        + " SELECT r.queue, r.kind, r.payload::jsonb, r.priority::smallint,"
        + "   coalesce(r.run_at::timestamptz, now() + r.delay_ms * interval '1 millisecond'), r.max_attempts,"
        + "   r.unique_key, r.concurrency_key" + (traceColumn ? ", ?::jsonb" : "")
        + " FROM unnest(?::text[], ?::text[], ?::text[], ?::int[], ?::text[], ?::bigint[], ?::int[], ?::text[], ?::text[])"
        + "   AS r(queue, kind, payload, priority, run_at, delay_ms, max_attempts, unique_key, concurrency_key)"
        + " ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL AND state IN ('available', 'running', 'retryable')"
        + " DO NOTHING"
        + " RETURNING id, unique_key, queue, run_at"
        + "), note AS MATERIALIZED ("
        // one notification per queue and statement, with the earliest run-at: a worker wakes at once for a
        // due job, and sets a timer for a later one (rounded up: waking early would find nothing)
        + " SELECT count(pg_notify(?, q.queue || ' ' || q.due || ' ' || q.sent)) AS n FROM ("
        + "   SELECT queue, ceil(extract(epoch FROM min(run_at)) * 1000)::bigint AS due,"
        + "   floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS sent FROM ins GROUP BY queue) q"
        + ") SELECT ins.id, ins.unique_key FROM note, ins ORDER BY ins.id";
    existingUnique = "SELECT id, unique_key FROM " + job
        + " WHERE unique_key = ANY (?::text[]) AND state IN ('available', 'running', 'retryable')";

    // A claim fixes the job's max attempts (the claiming worker's setting for its kind, unless the
    // job set its own), so that whoever later finds it lost judges it by the same limit.
    String claimed = " SET state = 'running', attempt = j.attempt + 1, owner = ?, node = ?, started_at = now(),"
        + " max_attempts = coalesce(j.max_attempts, (SELECT m.n FROM unnest(?::text[], ?::int[]) AS m(kind, n)"
        + "   WHERE m.kind = j.kind), ?), lease_until = ";
    // The trace context comes with the claim (null when none: nothing to read), so that the worker has
    // it without a round trip of its own.
    String taken = " RETURNING j.id, j.kind, j.payload::text, j.attempt, j.max_attempts,"
        + " j.cancel_requested_at IS NOT NULL, j.concurrency_key, "
        + (traceColumn ? "j.trace_context::text" : "NULL::text");
    // The claim's UPDATE finds its rows by the ctid the row-locking selection returned (a row locked
    // FOR UPDATE cannot move meanwhile): a TID scan whatever the statistics, never a look-up by id in
    // job_available, whose dead entries after a burst made claims slow, and a plan that stays good
    // when the server switches the prepared statement to a generic plan.
    String candidates = "SELECT id, ctid FROM " + job
        + " WHERE queue = ? AND state IN ('available', 'retryable') AND run_at <= now() AND kind = ANY (?::text[])"
        + " ORDER BY priority DESC, run_at, id LIMIT " + CANDIDATES + " FOR UPDATE SKIP LOCKED";
    // Advisory: the row lock (SKIP LOCKED) keeps workers off each other's candidates for the length of
    // the statement; the session advisory lock taken here owns the job until its outcome is written.
    // The UPDATE re-checks the state under both locks (the double-check), and whatever was locked but
    // not taken is unlocked before the statement ends, only after the UPDATE has run to completion.
    claimAdvisory = "WITH cand AS MATERIALIZED (" + candidates + ")"
        + ", locked AS MATERIALIZED (SELECT id, ctid FROM cand WHERE pg_try_advisory_lock(? # id))"
        + ", taken AS (UPDATE " + job + " j" + claimed + "NULL"
        + "   FROM locked WHERE j.ctid = locked.ctid AND j.id = locked.id AND j.state IN ('available', 'retryable')"
        + taken + ")"
        + ", freed AS MATERIALIZED (SELECT count(pg_advisory_unlock(? # l.id)) AS n FROM locked l"
        + "   WHERE NOT EXISTS (SELECT 1 FROM taken t WHERE t.id = l.id))"
        + " SELECT t.* FROM freed LEFT JOIN taken t ON true";
    // Per-key limits: a job with a concurrency key also takes one of N slot locks of its key
    // (slotBase # hashtextextended(key, i), i < N), tried in order, skipping the slots this session
    // holds already (a lock is re-entrant: its own try would succeed), and only for the first job of
    // each key in a batch. Every try sits in a CASE so that it runs only when it must. A slot taken for
    // a job not taken in the end is unlocked in the same statement, like the job's own lock.
    String keyedCandidates = "SELECT id, ctid, concurrency_key, priority, run_at FROM " + job
        + " WHERE queue = ? AND state IN ('available', 'retryable') AND run_at <= now() AND kind = ANY (?::text[])"
        + " ORDER BY priority DESC, run_at, id LIMIT " + CANDIDATES + " FOR UPDATE SKIP LOCKED";
    claimAdvisoryKeyed = "WITH cand AS MATERIALIZED (" + keyedCandidates + ")"
        + ", slotted AS MATERIALIZED (SELECT c.id, c.ctid, c.concurrency_key, s.k AS slot_key FROM"
        + "   (SELECT cand.*, row_number() OVER (PARTITION BY concurrency_key ORDER BY priority DESC, run_at, id) AS rn"
        + "    FROM cand) c"
        + "   LEFT JOIN LATERAL (SELECT g.k FROM (SELECT ? # hashtextextended(c.concurrency_key, i) AS k"
        + "     FROM generate_series(0, ? - 1) AS i) g"
        + "     WHERE CASE WHEN c.concurrency_key IS NULL OR c.rn <> 1 OR g.k = ANY (?::bigint[]) THEN false"
        + "       ELSE pg_try_advisory_lock(g.k) END LIMIT 1) s ON true"
        + "   ORDER BY c.priority DESC, c.run_at, c.id)"
        + ", locked AS MATERIALIZED (SELECT id, ctid, slot_key FROM slotted"
        + "   WHERE CASE WHEN concurrency_key IS NOT NULL AND slot_key IS NULL THEN false"
        + "     ELSE pg_try_advisory_lock(? # id) END LIMIT " + TAKE + ")"
        + ", taken AS (UPDATE " + job + " j" + claimed + "NULL"
        + "   FROM locked WHERE j.ctid = locked.ctid AND j.id = locked.id AND j.state IN ('available', 'retryable')"
        + taken + ", locked.slot_key)"
        + ", freed AS MATERIALIZED (SELECT count(pg_advisory_unlock(? # l.id)) AS n FROM locked l"
        + "   WHERE NOT EXISTS (SELECT 1 FROM taken t WHERE t.id = l.id))"
        + ", freed_slots AS MATERIALIZED (SELECT count(pg_advisory_unlock(s.slot_key)) AS n FROM slotted s"
        + "   WHERE s.slot_key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM taken t WHERE t.id = s.id))"
        + " SELECT t.* FROM freed CROSS JOIN freed_slots LEFT JOIN taken t ON true";
    // For measurement only (system property pglock.queue.advisoryOnlyClaims=true): the claim of the
    // classic advisory-lock queue, without row locks: every worker reads the same head of the queue
    // and tries the locks in order; the UPDATE's re-check is then all that stops a stale candidate.
    claimAdvisoryOnly = "WITH cand AS MATERIALIZED (SELECT id FROM " + job
        + " WHERE queue = ? AND state IN ('available', 'retryable') AND run_at <= now() AND kind = ANY (?::text[])"
        + " ORDER BY priority DESC, run_at, id LIMIT " + CANDIDATES + ")"
        + ", locked AS MATERIALIZED (SELECT id FROM cand WHERE pg_try_advisory_lock(? # id) LIMIT " + TAKE + ")"
        + ", taken AS (UPDATE " + job + " j" + claimed + "NULL"
        + "   FROM locked WHERE j.id = locked.id AND j.state IN ('available', 'retryable')" + taken + ")"
        + ", freed AS MATERIALIZED (SELECT count(pg_advisory_unlock(? # l.id)) AS n FROM locked l"
        + "   WHERE NOT EXISTS (SELECT 1 FROM taken t WHERE t.id = l.id))"
        + " SELECT t.* FROM freed LEFT JOIN taken t ON true";
    claimLease = "WITH cand AS MATERIALIZED (" + candidates + ")"
        + " UPDATE " + job + " j" + claimed + "now() + ? * interval '1 millisecond'"
        + " FROM cand WHERE j.ctid = cand.ctid AND j.id = cand.id" + taken;

    // The outcome of attempts, written only if the row is still at the attempt, claimed under the owner
    // (the session) it was claimed under. 'released' (a job given back at shutdown) makes it available
    // again with one more attempt allowed: the attempt number itself only ever rises (a fencing token).
    // An outcome whose retention is zero (purge: the worker's retention for its state) deletes the row
    // instead: a finished job nobody keeps costs no new row version and no index entries, and leaves
    // nothing for pruning to do. Both writes check the same attempt and owner.
    String outcome = "WITH c AS MATERIALIZED (SELECT * FROM unnest(?::bigint[], ?::int[], ?::text[], ?::bigint[],"
        + "   ?::text[], ?::text[], ?::text[], ?::bigint[], ?::bool[])"
        + "   AS c(id, attempt, state, delay_ms, eclass, emsg, estack, owner, purge))"
        + ", gone AS (DELETE FROM " + job + " j USING c WHERE c.purge AND " + OWNED_BY_C + " RETURNING j.id)"
        + ", done AS (UPDATE " + job + " j SET"
        + "   state = CASE WHEN c.state = 'released' THEN 'available' ELSE c.state END,"
        + "   max_attempts = CASE WHEN c.state = 'released' THEN coalesce(j.max_attempts, j.attempt) + 1"
        + "     ELSE j.max_attempts END,"
        + "   run_at = CASE WHEN c.state = 'retryable' THEN now() + c.delay_ms * interval '1 millisecond'"
        + "     WHEN c.state = 'released' THEN now() ELSE j.run_at END,"
        + "   finished_at = CASE WHEN c.state IN ('succeeded', 'discarded', 'cancelled') THEN now() END,"
        + "   errors = CASE WHEN c.eclass IS NULL THEN j.errors ELSE j.errors || jsonb_build_array(jsonb_build_object("
        + "     'attempt', c.attempt, 'at', now(), 'node', j.node, 'class', c.eclass, 'message', c.emsg,"
        + "     'stack', c.estack)) END,"
        + "   owner = NULL, lease_until = NULL"
        + "   FROM c WHERE NOT c.purge AND " + OWNED_BY_C + " RETURNING j.id)"
        + ", n AS MATERIALIZED (SELECT (SELECT count(*) FROM done) + (SELECT count(*) FROM gone) AS updated)";
    // The unlocks are in the select list: it is evaluated only once n's row exists, that is after
    // the UPDATE ran to completion. Then the per-key slots the jobs held, if any.
    completeAdvisory = outcome
        + " SELECT n.updated, (SELECT count(*) FILTER (WHERE pg_advisory_unlock(? # c.id)) FROM c),"
        + " (SELECT count(*) FILTER (WHERE pg_advisory_unlock(k)) FROM unnest(?::bigint[]) AS k WHERE k IS NOT NULL)"
        + " FROM n";
    completeLease = outcome + " SELECT n.updated, 0 FROM n";

    succeedInTransaction = "UPDATE " + job + " SET state = 'succeeded', finished_at = now(), owner = NULL,"
        + " lease_until = NULL WHERE id = ? AND attempt = ? AND CASE WHEN state = 'running' THEN owner END = ?";
    purgeInTransaction = "DELETE FROM " + job
        + " WHERE id = ? AND attempt = ? AND CASE WHEN state = 'running' THEN owner END = ?";
    cancelCheck = "SELECT id FROM " + job + " WHERE id = ANY (?::bigint[]) AND cancel_requested_at IS NOT NULL";
    heartbeatLease = "UPDATE " + job + " SET lease_until = now() + ? * interval '1 millisecond'"
        + " WHERE id = ANY (?::bigint[]) AND owner = ? AND state = 'running'"
        + " RETURNING id, cancel_requested_at IS NOT NULL";

    // A running job whose owner is gone goes back to available at once (or to discarded when it used
    // its last attempt, or to cancelled when a cancel was asked), with the lost attempt recorded.
    // The limit is the row's, fixed by its claim: a rescuer may not know the kind at all. (A row with
    // none, never claimed by a worker, is never discarded here: the comparison with null is not true.)
    String lostLimit = "j.max_attempts";
    String back = " SET state = CASE WHEN j.cancel_requested_at IS NOT NULL THEN 'cancelled'"
        + "   WHEN j.attempt >= " + lostLimit + " THEN 'discarded' ELSE 'available' END,"
        + " finished_at = CASE WHEN j.cancel_requested_at IS NOT NULL OR j.attempt >= " + lostLimit
        + "   THEN now() END,"
        + " run_at = now(), owner = NULL, lease_until = NULL,"
        + " errors = j.errors || jsonb_build_array(jsonb_build_object('attempt', j.attempt, 'at', now(), 'node', j.node,"
        + "   'class', 'io.pglock.queue.WorkerLost', 'message', ? || ?, 'stack', NULL))";
    // Which owners are gone: every worker session holds a presence lock (presenceBase # owner) for its
    // whole life, so one try per distinct owner of running rows tells, however many jobs each runs
    // (an index-only scan of job_running). The jobs of gone owners, a thousand at a time, are then
    // taken one by one under their own lock with the double-check, as a job's owner may have finished
    // it (and unlocked it) before dying. Only rows owned through advisory locks (lease_until null): a
    // lease-mode worker's job holds none. With more than a thousand such rows, a cursor (the last id
    // seen) takes the rescue past any it cannot lock.
    rescueAdvisory = "WITH owners AS MATERIALIZED (SELECT DISTINCT owner FROM " + job
        + "   WHERE queue = ? AND state = 'running' AND lease_until IS NULL AND owner IS DISTINCT FROM ?)"
        + ", gone AS MATERIALIZED (SELECT owner FROM owners"
        + "   WHERE CASE WHEN owner IS NULL THEN true ELSE pg_try_advisory_lock(? # owner) END)"
        + ", cand AS MATERIALIZED (SELECT id, attempt FROM " + job
        + "   WHERE queue = ? AND state = 'running' AND lease_until IS NULL"
        + "   AND (owner IS NULL AND EXISTS (SELECT 1 FROM gone WHERE gone.owner IS NULL)"
        + "     OR owner IN (SELECT owner FROM gone WHERE owner IS NOT NULL))"
        + "   AND id > ? ORDER BY id LIMIT " + RESCUE_BATCH + ")"
        + ", locked AS MATERIALIZED (SELECT id, attempt FROM cand WHERE pg_try_advisory_lock(? # id))"
        + ", freed AS (UPDATE " + job + " j" + back
        + "   FROM locked l WHERE j.id = l.id AND j.state = 'running' AND j.attempt = l.attempt RETURNING j.id)"
        + ", n AS MATERIALIZED (SELECT count(*) AS freed FROM freed)"
        + " SELECT n.freed, (SELECT count(*) FILTER (WHERE pg_advisory_unlock(? # l.id)) FROM locked l),"
        + " (SELECT count(*) FILTER (WHERE pg_advisory_unlock(? # g.owner)) FROM gone g WHERE g.owner IS NOT NULL),"
        + " (SELECT count(*) FROM cand), (SELECT max(id) FROM cand) FROM n";
    rescueLease = "WITH x AS MATERIALIZED (SELECT id FROM " + job
        + "   WHERE queue = ? AND state = 'running' AND lease_until < now() LIMIT 1000 FOR UPDATE SKIP LOCKED)"
        + " , freed AS (UPDATE " + job + " j" + back + " FROM x WHERE j.id = x.id RETURNING j.id)"
        + " SELECT count(*), 0 FROM freed";

    // Small batches, rows other sessions hold skipped: pruning never waits on or blocks a worker.
    // Each worker prunes its own queue, by its own retention.
    // The rows through job_prune (queue, finished_at): this queue's oldest first, never other queues'.
    // The DELETE finds them by the ctid the locking selection returned (a row locked FOR UPDATE cannot
    // move): a TID scan, where a join by id let the generic plan hash-join a sequential scan of the table.
    prune = "WITH x AS MATERIALIZED (SELECT id, ctid FROM " + job
        + "   WHERE queue = ? AND state IN ('succeeded', 'discarded', 'cancelled')"
        + "   AND finished_at < now() - least(?, ?) * interval '1 millisecond'"
        + "   AND (CASE WHEN state = 'discarded' THEN ? ELSE ? END) * interval '1 millisecond' < now() - finished_at"
        + "   LIMIT ? FOR UPDATE SKIP LOCKED)"
        + " DELETE FROM " + job + " j USING x WHERE j.ctid = x.ctid AND j.id = x.id";
  }
}
