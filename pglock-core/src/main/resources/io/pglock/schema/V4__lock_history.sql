-- pglock schema, version 4: lock history.
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- One row per hold of a lock taken through SessionLock.run with history on: who held it (node,
-- namespace, backend pid), when, and how the hold ended. Rows are written in batches, off the
-- caller's path, by the holder's PgLocks; a hold whose holder died (its backend is gone) stays
-- 'open' until another node takes the same lock, or a sweep runs, and is then closed as
-- 'disconnected' with the time it was noticed.

CREATE TABLE ${schema}.lock_history (
  id            bigint      PRIMARY KEY,  -- chosen by the holder, so that start and end can be batched apart
  namespace     text        NOT NULL,
  name          text        NOT NULL,
  key           bigint      NOT NULL,
  node          text        NOT NULL,
  pid           integer     NOT NULL,     -- the backend that held the lock
  backend_start timestamptz NOT NULL,     -- that backend's start: tells a dead holder from a reused pid
  acquired_at   timestamptz NOT NULL,
  released_at   timestamptz,
  outcome       text        NOT NULL CHECK (outcome IN ('open', 'released', 'failed', 'lost', 'disconnected')),
  loss_cause    text,                     -- for 'lost': CONNECTION_LOST, LEASE_EXPIRED, CLOSED
  error_class   text,                     -- for 'failed': the work's exception
  error_message text,
  error_stack   text                      -- trimmed
);
CREATE INDEX lock_history_open ON ${schema}.lock_history (key) WHERE outcome = 'open';
CREATE INDEX lock_history_name ON ${schema}.lock_history (namespace, name, acquired_at DESC);
CREATE INDEX lock_history_released ON ${schema}.lock_history (released_at);
CREATE INDEX lock_history_failed ON ${schema}.lock_history (acquired_at DESC) WHERE outcome IN ('failed', 'lost', 'disconnected');
REVOKE ALL ON ${schema}.lock_history FROM PUBLIC;

-- A holder counts as gone when no backend has its pid and start. pg_stat_activity hides the start of
-- another role's backends (NULL) from a role without pg_read_all_stats: such a holder counts as alive.

-- Writes a batch of hold records (arrays of one length; the newest state of each hold), then closes
-- as 'disconnected' the open holds of the same keys whose holder backend is gone. Returns the
-- number of holds so closed.
CREATE FUNCTION ${schema}.record_holds(
    p_id bigint[], p_namespace text[], p_name text[], p_key bigint[], p_node text[], p_pid integer[],
    p_backend_start timestamptz[], p_acquired_at timestamptz[], p_released_at timestamptz[], p_outcome text[],
    p_loss_cause text[], p_error_class text[], p_error_message text[], p_error_stack text[]) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_closed integer;
BEGIN
  INSERT INTO ${schema}.lock_history AS h (id, namespace, name, key, node, pid, backend_start, acquired_at,
                                          released_at, outcome, loss_cause, error_class, error_message, error_stack)
  SELECT * FROM unnest(p_id, p_namespace, p_name, p_key, p_node, p_pid, p_backend_start, p_acquired_at,
                       p_released_at, p_outcome, p_loss_cause, p_error_class, p_error_message, p_error_stack)
  ON CONFLICT (id) DO UPDATE
     SET released_at = EXCLUDED.released_at, outcome = EXCLUDED.outcome, loss_cause = EXCLUDED.loss_cause,
         error_class = EXCLUDED.error_class, error_message = EXCLUDED.error_message,
         error_stack = EXCLUDED.error_stack
   WHERE h.outcome IN ('open', 'disconnected');  -- the holder's own account wins over a sweep's
  WITH closed AS (
    UPDATE ${schema}.lock_history h SET outcome = 'disconnected', released_at = now()
     WHERE h.outcome = 'open' AND h.key = ANY (p_key) AND h.id <> ALL (p_id)
       AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = h.pid
                         AND (a.backend_start IS NULL OR a.backend_start = h.backend_start))
    RETURNING 1)
  SELECT count(*) INTO v_closed FROM closed;
  RETURN v_closed;
END
$$;

-- Closes as 'disconnected' every open hold whose holder backend is gone, and deletes at most
-- p_limit holds that ended before p_before. Returns the holds closed and deleted.
CREATE FUNCTION ${schema}.sweep_holds(p_before timestamptz, p_limit integer, OUT closed integer, OUT pruned integer)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  WITH c AS (
    UPDATE ${schema}.lock_history h SET outcome = 'disconnected', released_at = now()
     WHERE h.outcome = 'open'
       AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = h.pid
                         AND (a.backend_start IS NULL OR a.backend_start = h.backend_start))
    RETURNING 1)
  SELECT count(*) INTO closed FROM c;
  WITH d AS (
    DELETE FROM ${schema}.lock_history
     WHERE id IN (SELECT id FROM ${schema}.lock_history WHERE released_at < p_before LIMIT p_limit)
    RETURNING 1)
  SELECT count(*) INTO pruned FROM d;
END
$$;

-- The history, for operators and `pglock history`. Error messages and stacks may carry data: the view
-- is not granted to PUBLIC; grant SELECT on it to the roles that should read it.
CREATE VIEW ${schema}.history AS
SELECT id, namespace, name, key, node, pid, acquired_at, released_at, released_at - acquired_at AS held_for,
       outcome, loss_cause, error_class, error_message, error_stack
  FROM ${schema}.lock_history;
