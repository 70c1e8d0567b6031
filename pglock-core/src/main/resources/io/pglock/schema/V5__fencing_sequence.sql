-- pglock schema, version 5: fencing tokens from one sequence; the check keeps the newest token seen.
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- Version 2 wrote a row per grant, which cost a row update and commit on every fenced grant and
-- could lose a new lock's row in a crash (the token then started again at 1). Now:
--
-- * Issuing: a grant takes nextval of one sequence, ${schema}.fencing_token_seq: strictly
--   increasing over every grant of every lock, so of each lock; a few microseconds, no row written.
--   Lock sessions commit asynchronously, so a crash can lose the last sequence advances, and an
--   asynchronous replica promoted in a failover can lag. The one-row table fencing_epoch remembers
--   the server start (pg_postmaster_start_time()) the sequence last served under; the first fenced
--   grant of each backend compares, and under another start (after a restart, a crash, on a promoted
--   replica) moves the sequence up by 2^32, far above anything that can have been lost, committing
--   that move synchronously, so that a second crash cannot lose it.
-- * Checking: check_fencing_token and accept_fencing_token keep, per lock, the newest token a write
--   has presented, in the writer's own transaction: a token older than it is refused; an equal or
--   newer one is accepted and recorded, and the row stays locked until the writer's transaction ends,
--   so that writes under the lock are applied in token order: a newer holder's check waits for an
--   older holder's write in flight, and then refuses it nothing; an older holder's check after a
--   newer one's commit is refused.

DROP FUNCTION ${schema}.try_lock_fenced(bigint);
DROP FUNCTION ${schema}.try_lock_fenced(int, int);
DROP FUNCTION ${schema}.lock_fenced(bigint);
DROP FUNCTION ${schema}.lock_fenced(int, int);
DROP FUNCTION ${schema}.next_fencing_token(smallint, bigint, boolean);
DROP FUNCTION ${schema}.fencing_token_is_current(text, text, bigint);
DROP FUNCTION ${schema}.check_fencing_token(text, text, bigint);
DROP FUNCTION ${schema}.advance_fencing_tokens();

-- The table now holds the newest token a check has seen per lock; the issued tokens of version 2
-- are kept as a floor, and the sequence starts above all of them.
ALTER TABLE ${schema}.fencing_token DROP COLUMN started;
COMMENT ON TABLE ${schema}.fencing_token IS 'per lock: the newest fencing token a check has accepted';

CREATE SEQUENCE ${schema}.fencing_token_seq AS bigint MINVALUE 1 NO CYCLE;
SELECT setval('${schema}.fencing_token_seq', coalesce((SELECT max(token) FROM ${schema}.fencing_token), 0) + 1, false);
REVOKE ALL ON SEQUENCE ${schema}.fencing_token_seq FROM PUBLIC;

CREATE TABLE ${schema}.fencing_epoch (
  one     boolean     PRIMARY KEY DEFAULT true CHECK (one),
  started timestamptz NOT NULL
);
INSERT INTO ${schema}.fencing_epoch (started) VALUES (pg_postmaster_start_time());
REVOKE ALL ON ${schema}.fencing_epoch FROM PUBLIC;

-- The next token. Once per backend (a custom setting remembers it) it checks the epoch.
--
-- Why synchronous_commit is set for the session, not the transaction: a SET LOCAL made inside a
-- function with a SET clause is undone when the function returns, before the commit it is meant for.
-- The session setting holds for the statement that moves the sequence, and the backend's next call
-- puts the lock session's setting (off) back.
CREATE FUNCTION ${schema}.next_fencing_token() RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_started timestamptz;
  v_state text := current_setting('pglock.fencing_epoch', true);
BEGIN
  IF v_state IS NULL OR v_state = '' THEN
    SELECT started INTO v_started FROM ${schema}.fencing_epoch FOR UPDATE;
    IF v_started IS DISTINCT FROM pg_postmaster_start_time() THEN
      PERFORM setval('${schema}.fencing_token_seq',
                     (SELECT last_value FROM ${schema}.fencing_token_seq) + 4294967296, true);
      UPDATE ${schema}.fencing_epoch SET started = pg_postmaster_start_time();
      PERFORM set_config('pglock.fencing_epoch', 'moved:' || current_setting('synchronous_commit'), false);
      PERFORM set_config('synchronous_commit', 'on', false);
    ELSE
      PERFORM set_config('pglock.fencing_epoch', 'checked', false);
    END IF;
  ELSIF v_state LIKE 'moved:%' THEN
    PERFORM set_config('synchronous_commit', substr(v_state, 7), false);
    PERFORM set_config('pglock.fencing_epoch', 'checked', false);
  END IF;
  RETURN nextval('${schema}.fencing_token_seq');
END
$$;

-- Try-locks a 64-bit key (exclusive) and returns its token, or 0 if not granted.
CREATE FUNCTION ${schema}.try_lock_fenced(p_key bigint) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
  SELECT CASE WHEN pg_catalog.pg_try_advisory_lock(p_key) THEN ${schema}.next_fencing_token() ELSE 0 END
$$;

-- Try-locks a pair of 32-bit keys (exclusive) and returns its token, or 0 if not granted.
CREATE FUNCTION ${schema}.try_lock_fenced(p_first int, p_second int) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
  SELECT CASE WHEN pg_catalog.pg_try_advisory_lock(p_first, p_second) THEN ${schema}.next_fencing_token() ELSE 0 END
$$;

-- Waits for a 64-bit key (exclusive, bounded by the caller's lock_timeout) and returns its token.
CREATE FUNCTION ${schema}.lock_fenced(p_key bigint) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
  SELECT ${schema}.next_fencing_token() FROM pg_catalog.pg_advisory_lock(p_key)
$$;

-- Waits for a pair of 32-bit keys (exclusive, bounded by lock_timeout) and returns its token.
CREATE FUNCTION ${schema}.lock_fenced(p_first int, p_second int) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
  SELECT ${schema}.next_fencing_token() FROM pg_catalog.pg_advisory_lock(p_first, p_second)
$$;

-- Whether a write with this token may go ahead, for a WHERE clause: true if the token is at least the
-- newest one accepted for the named lock (and it becomes the newest), false if a newer holder has
-- written since. Holds the lock's row until the caller's transaction ends.
CREATE FUNCTION ${schema}.accept_fencing_token(p_namespace text, p_name text, p_token bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_key bigint := ${schema}.key(p_namespace, p_name);
BEGIN
  INSERT INTO ${schema}.fencing_token AS f (space, key, token) VALUES (1, v_key, p_token)
  ON CONFLICT (space, key) DO UPDATE SET token = EXCLUDED.token WHERE f.token <= EXCLUDED.token;
  RETURN FOUND; -- a newer token's row stays locked (ON CONFLICT locks it) and unchanged
END
$$;

-- As accept_fencing_token, but raises SQLSTATE PGF01 (aborting the caller's transaction) instead
-- of returning false.
CREATE FUNCTION ${schema}.check_fencing_token(p_namespace text, p_name text, p_token bigint) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_newest bigint;
BEGIN
  IF NOT ${schema}.accept_fencing_token(p_namespace, p_name, p_token) THEN
    SELECT token INTO v_newest FROM ${schema}.fencing_token
     WHERE space = 1 AND key = ${schema}.key(p_namespace, p_name);
    RAISE EXCEPTION 'pglock: fencing token % of lock %:% is stale (a write with token % came first): another holder has had the lock since',
      p_token, p_namespace, p_name, v_newest
      USING ERRCODE = 'PGF01',
            HINT = 'the lock was lost (lease expired, connection lost) and granted again; do not write';
  END IF;
END
$$;

-- For an operator who restored the table or the sequence from a backup: moves the sequence past
-- every token a check has seen, and then by 2^32.
CREATE FUNCTION ${schema}.advance_fencing_tokens() RETURNS bigint
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT setval('${schema}.fencing_token_seq',
                greatest((SELECT last_value FROM ${schema}.fencing_token_seq),
                         coalesce((SELECT max(token) FROM ${schema}.fencing_token), 0)) + 4294967296, true)
$$;
REVOKE ALL ON FUNCTION ${schema}.advance_fencing_tokens() FROM PUBLIC;
