-- pglock schema, version 2: fencing tokens.
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- A fencing token is a bigint that strictly increases with every grant of a lock. pglock takes it in
-- the same statement as the grant (try_lock_fenced, lock_fenced); the resource checks it inside the
-- writer's own transaction (check_fencing_token, fencing_token_is_current), so that a former holder
-- (paused, partitioned, its lease run out) cannot write after a newer holder got the lock.
--
-- Durability without a disk flush per grant. Lock sessions commit token updates with
-- synchronous_commit off, so a crash may lose the last few increments, and an asynchronous replica
-- promoted in a failover may lack the newest ones. Each row therefore remembers the server start
-- (pg_postmaster_start_time()) under which it was last raised: the first grant of a lock under a
-- different start (after a restart, a crash, or on a promoted replica) moves its token up by 2^32,
-- far above any increment that can have been lost. Tokens so increase strictly across client
-- restarts, server crashes and failovers; advance_fencing_tokens() adds the same jump at once, for
-- an operator who restores a backup or moves the table by hand.
--
-- The functions are SECURITY DEFINER: a role needs only EXECUTE on them (PostgreSQL grants it to
-- PUBLIC by default), never a write privilege on the table, so no client can lower a token.

CREATE TABLE ${schema}.fencing_token (
  space   smallint    NOT NULL,  -- pg_locks.objsubid: 1 for a 64-bit key, 2 for a pair of 32-bit keys
  key     bigint      NOT NULL,  -- the 64-bit key; for a pair, first << 32 | second (as unsigned)
  token   bigint      NOT NULL,
  started timestamptz NOT NULL,  -- pg_postmaster_start_time() when the token was last raised
  PRIMARY KEY (space, key)
);
REVOKE ALL ON ${schema}.fencing_token FROM PUBLIC;

-- The next token of a lock whose advisory lock the caller holds. With wait off it does not wait for
-- a row lock: it returns 0 if a former holder's transaction is checking the token right now (its
-- write must commit before anyone else may have the lock).
CREATE FUNCTION ${schema}.next_fencing_token(p_space smallint, p_key bigint, p_wait boolean) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_token bigint;
  v_started timestamptz;
BEGIN
  IF p_wait THEN
    SELECT token, started INTO v_token, v_started FROM ${schema}.fencing_token
     WHERE space = p_space AND key = p_key FOR NO KEY UPDATE;
  ELSE
    SELECT token, started INTO v_token, v_started FROM ${schema}.fencing_token
     WHERE space = p_space AND key = p_key FOR NO KEY UPDATE SKIP LOCKED;
  END IF;
  IF FOUND THEN
    v_token := v_token + CASE WHEN v_started = pg_postmaster_start_time() THEN 1 ELSE 4294967296 END;
    UPDATE ${schema}.fencing_token SET token = v_token, started = pg_postmaster_start_time()
     WHERE space = p_space AND key = p_key;
    RETURN v_token;
  END IF;
  INSERT INTO ${schema}.fencing_token (space, key, token, started)
  VALUES (p_space, p_key, 1, pg_postmaster_start_time())
  ON CONFLICT (space, key) DO NOTHING;
  IF FOUND THEN
    RETURN 1;
  END IF;
  RETURN 0; -- the row exists and a former holder's check holds it
END
$$;

-- Try-locks a 64-bit key (exclusive) and returns its new token, or 0 if not granted.
CREATE FUNCTION ${schema}.try_lock_fenced(p_key bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_token bigint;
BEGIN
  IF NOT pg_try_advisory_lock(p_key) THEN
    RETURN 0;
  END IF;
  v_token := ${schema}.next_fencing_token(1::smallint, p_key, false);
  IF v_token = 0 THEN
    PERFORM pg_advisory_unlock(p_key);
  END IF;
  RETURN v_token;
END
$$;

-- Try-locks a pair of 32-bit keys (exclusive) and returns its new token, or 0 if not granted.
CREATE FUNCTION ${schema}.try_lock_fenced(p_first int, p_second int) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_token bigint;
BEGIN
  IF NOT pg_try_advisory_lock(p_first, p_second) THEN
    RETURN 0;
  END IF;
  v_token := ${schema}.next_fencing_token(2::smallint, (p_first::bigint << 32) | (p_second::bigint & 4294967295), false);
  IF v_token = 0 THEN
    PERFORM pg_advisory_unlock(p_first, p_second);
  END IF;
  RETURN v_token;
END
$$;

-- Waits for a 64-bit key (exclusive, bounded by the caller's lock_timeout) and returns its new token.
CREATE FUNCTION ${schema}.lock_fenced(p_key bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM pg_advisory_lock(p_key);
  RETURN ${schema}.next_fencing_token(1::smallint, p_key, true);
END
$$;

-- Waits for a pair of 32-bit keys (exclusive, bounded by lock_timeout) and returns its new token.
CREATE FUNCTION ${schema}.lock_fenced(p_first int, p_second int) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM pg_advisory_lock(p_first, p_second);
  RETURN ${schema}.next_fencing_token(2::smallint, (p_first::bigint << 32) | (p_second::bigint & 4294967295), true);
END
$$;

-- Whether the token is still the newest of the named lock. Run it in the transaction that writes to
-- the protected resource: it holds the token's row until that transaction ends, so no newer holder
-- can be granted the lock before the write commits or rolls back.
CREATE FUNCTION ${schema}.fencing_token_is_current(p_namespace text, p_name text, p_token bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_token bigint;
BEGIN
  SELECT token INTO v_token FROM ${schema}.fencing_token
   WHERE space = 1 AND key = ${schema}.key(p_namespace, p_name) FOR SHARE;
  RETURN FOUND AND v_token = p_token;
END
$$;

-- Raises SQLSTATE PGF01 (and so aborts the caller's transaction) unless the token is still the newest
-- of the named lock; holds the token's row as fencing_token_is_current does.
CREATE FUNCTION ${schema}.check_fencing_token(p_namespace text, p_name text, p_token bigint) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_token bigint;
BEGIN
  SELECT token INTO v_token FROM ${schema}.fencing_token
   WHERE space = 1 AND key = ${schema}.key(p_namespace, p_name) FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'pglock: lock %:% has never been granted with a fencing token, so token % is not one of its own',
      p_namespace, p_name, p_token
      USING ERRCODE = 'PGF01', HINT = 'check the namespace and name the token was taken under';
  END IF;
  IF v_token <> p_token THEN
    RAISE EXCEPTION 'pglock: fencing token % of lock %:% is stale (the newest is %): another holder has had the lock since',
      p_token, p_namespace, p_name, v_token
      USING ERRCODE = 'PGF01',
            HINT = 'the lock was lost (lease expired, connection lost) and granted again; do not write';
  END IF;
END
$$;

-- For an operator: moves every token up by 2^32 at once (after restoring a backup of the table, say).
CREATE FUNCTION ${schema}.advance_fencing_tokens() RETURNS bigint
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  WITH moved AS (UPDATE ${schema}.fencing_token SET token = token + 4294967296 RETURNING 1)
  SELECT count(*) FROM moved
$$;
REVOKE ALL ON FUNCTION ${schema}.advance_fencing_tokens() FROM PUBLIC;
