-- pglock schema, version 13: the SQL API, for clients in any language, psql, scripts and triggers.
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- Fleets mix languages, and triggers live in the database: a Python or Node service, a cron script or
-- a trigger must be able to take the lock a Java service takes, record how its work under the lock
-- ended where `pglock history` shows it, and hand a job to the Java workers, without reimplementing
-- the key derivation, the name table, the hold records or the enqueue's wake-up. These functions are
-- that contract, documented in docs/sql-api.md as a stable API: their names, arguments, results and
-- errors change only with a new major version.
--
-- * Locks by (namespace, name) on exactly the key LockKey.named takes (key(), 64-bit space), checked
--   by the rules Java applies, so a name Java refuses is refused here too, with the same limits.
--   A granted lock's name is recorded in lock_name (for the locks view) only when it is missing or
--   an hour old: a read on the lock path, a write once an hour per name at most. Recording a name
--   never fails a lock.
-- * Holds with history: the lock, and a row in lock_history written as SessionLock.run writes it
--   (through record_holds, which also closes dead holders' holds of the key), ended by the backend
--   that opened it, as released or failed with the caller's error. A client that dies leaves it open
--   until a sweep or the next holder finds its backend gone (pid and backend start), as for Java.
-- * enqueue: the job row JobRequest describes, validated as JobRequest validates it, in the caller's
--   transaction (a trigger's job exists only if the trigger's transaction commits), with the NOTIFY
--   a Java enqueue sends, which PostgreSQL delivers at commit, so idle workers wake at once.
--
-- Errors: invalid arguments raise SQLSTATE 22023 (invalid_parameter_value), as key() does, naming the
-- argument and the fix; an unlock of a lock not held raises PGL01; ending a hold that is not this
-- session's open hold raises PGL02; a unique key taken and freed again during the enqueue, repeatedly,
-- raises PGQ01 (try again).

-- The key of a name, refused as LockKey.named refuses it: a namespace of 1 to 63 characters without
-- ':', whitespace or control characters; a name not blank and at most 512 UTF-8 bytes. key() keeps
-- its looser checks: existing callers may depend on them.
CREATE FUNCTION ${schema}.checked_key(namespace text, name text) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF namespace IS NULL OR namespace = '' THEN
    RAISE EXCEPTION 'pglock: namespace must not be null or empty'
      USING ERRCODE = '22023', HINT = 'use the namespace the Java side locks in, for example the service name';
  END IF;
  IF char_length(namespace) > 63 THEN
    RAISE EXCEPTION 'pglock: namespace is % characters, longer than 63: "%..."', char_length(namespace),
      left(namespace, 20) USING ERRCODE = '22023', HINT = 'use a shorter namespace';
  END IF;
  IF strpos(namespace, ':') > 0 THEN
    RAISE EXCEPTION 'pglock: namespace "%" contains '':'', which separates namespace from name', namespace
      USING ERRCODE = '22023', HINT = 'use letters, digits, ''-'', ''_'' or ''.''';
  END IF;
  IF namespace ~ '[[:space:]\u0001-\u001f\u007f-\u009f]' THEN
    RAISE EXCEPTION 'pglock: namespace "%" contains whitespace or a control character', namespace
      USING ERRCODE = '22023', HINT = 'use letters, digits, ''-'', ''_'' or ''.''';
  END IF;
  IF name IS NULL OR name !~ '[^[:space:]]' THEN
    RAISE EXCEPTION 'pglock: lock name must not be null or blank: "%"', name
      USING ERRCODE = '22023', HINT = 'name the resource the lock protects, for example invoice-42';
  END IF;
  IF octet_length(convert_to(name, 'UTF8')) > 512 THEN
    RAISE EXCEPTION 'pglock: lock name is % UTF-8 bytes, longer than 512: "%..."',
      octet_length(convert_to(name, 'UTF8')), left(name, 20)
      USING ERRCODE = '22023', HINT = 'lock on a shorter identifier, such as the row''s id';
  END IF;
  RETURN ${schema}.key(namespace, name);
END
$$;

-- Records the name of a lock just granted, for the locks view: only when it is missing or was last
-- seen an hour ago, so that a name locked often costs a read, not a write. Nothing in a read-only
-- transaction (a standby, or default_transaction_read_only). The key is computed here, so no name can
-- be recorded under a key it does not hash to. A failure is dropped: the name is for display, the lock
-- is what was asked for. (A cancel or statement timeout still ends the statement: the session-lock
-- functions then unlock what they took.)
CREATE FUNCTION ${schema}.note_lock_name(p_namespace text, p_name text) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_key bigint := ${schema}.key(p_namespace, p_name);
BEGIN
  IF current_setting('transaction_read_only') = 'on'
     OR EXISTS (SELECT 1 FROM ${schema}.lock_name n WHERE n.key = v_key AND n.last_seen > now() - interval '1 hour') THEN
    RETURN;
  END IF;
  INSERT INTO ${schema}.lock_name AS t (key, namespace, name) VALUES (v_key, p_namespace, p_name)
  ON CONFLICT (key) DO UPDATE SET last_seen = now() WHERE t.last_seen < now() - interval '1 hour';
EXCEPTION WHEN OTHERS THEN
  NULL;
END
$$;

-- Every lock function below: the checked key, the lock in its scope and mode, now or waiting (bounded
-- by the caller's lock_timeout: SQLSTATE 55P03, nothing held; statement_timeout 57014; a deadlock
-- 40P01), then the name recorded. True if granted. A cancel while the name is recorded ends the
-- statement with an error, so the session lock just taken is released: an error means nothing held.
CREATE FUNCTION ${schema}.take_lock(p_namespace text, p_name text, p_shared boolean, p_wait boolean, p_xact boolean)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_key bigint := ${schema}.checked_key(p_namespace, p_name);
BEGIN
  IF p_wait THEN
    IF p_xact AND p_shared THEN
      PERFORM pg_advisory_xact_lock_shared(v_key);
    ELSIF p_xact THEN
      PERFORM pg_advisory_xact_lock(v_key);
    ELSIF p_shared THEN
      PERFORM pg_advisory_lock_shared(v_key);
    ELSE
      PERFORM pg_advisory_lock(v_key);
    END IF;
  ELSIF NOT (CASE WHEN p_xact AND p_shared THEN pg_try_advisory_xact_lock_shared(v_key)
                  WHEN p_xact THEN pg_try_advisory_xact_lock(v_key)
                  WHEN p_shared THEN pg_try_advisory_lock_shared(v_key)
                  ELSE pg_try_advisory_lock(v_key) END) THEN
    RETURN false;
  END IF;
  BEGIN
    PERFORM ${schema}.note_lock_name(p_namespace, p_name);
  EXCEPTION WHEN query_canceled THEN
    IF NOT p_xact THEN -- a transaction lock ends with the transaction the error aborts
      PERFORM CASE WHEN p_shared THEN pg_advisory_unlock_shared(v_key) ELSE pg_advisory_unlock(v_key) END;
    END IF;
    RAISE;
  END;
  RETURN true;
END
$$;

-- Session locks: held until unlock() or the end of the connection, whatever transactions do. Like
-- pg_advisory_lock, a lock taken twice on one connection is held twice and needs two unlocks.

-- Takes the lock if free now; true if granted.
CREATE FUNCTION ${schema}.try_lock(namespace text, name text, shared boolean DEFAULT false) RETURNS boolean
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  SELECT ${schema}.take_lock(namespace, name, shared, false, false)
$$;

-- Waits for the lock, as long as the caller's lock_timeout allows.
CREATE FUNCTION ${schema}.lock(namespace text, name text, shared boolean DEFAULT false) RETURNS void
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  SELECT ${schema}.take_lock(namespace, name, shared, true, false)
$$;

-- Releases one hold of a session lock of this connection. Unlocking a lock this connection does not
-- hold (in that mode) is a bug in the caller: SQLSTATE PGL01, never a quiet false.
CREATE FUNCTION ${schema}.unlock(namespace text, name text, shared boolean DEFAULT false) RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_key bigint := ${schema}.checked_key(namespace, name);
BEGIN
  IF NOT (CASE WHEN shared THEN pg_advisory_unlock_shared(v_key) ELSE pg_advisory_unlock(v_key) END) THEN
    RAISE EXCEPTION 'pglock: %lock %:% is not held by this connection', CASE WHEN shared THEN 'shared ' ELSE '' END,
      namespace, name
      USING ERRCODE = 'PGL01',
            HINT = 'unlock only what this connection took (session locks belong to the connection, not the transaction), in the mode it took it';
  END IF;
END
$$;

-- Transaction locks: released at commit or rollback, never by unlock(). In autocommit mode the
-- statement is the transaction, so the lock ends with it: open a transaction first.

-- Takes the lock for the transaction if free now; true if granted.
CREATE FUNCTION ${schema}.try_xact_lock(namespace text, name text, shared boolean DEFAULT false) RETURNS boolean
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  SELECT ${schema}.take_lock(namespace, name, shared, false, true)
$$;

-- Waits for the lock for the transaction, bounded as lock() is.
CREATE FUNCTION ${schema}.xact_lock(namespace text, name text, shared boolean DEFAULT false) RETURNS void
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  SELECT ${schema}.take_lock(namespace, name, shared, true, true)
$$;

-- Holds with history, as SessionLock.run records them: an exclusive session lock and an open row in
-- lock_history; unlock_with_history releases the lock and ends the row as released, or failed with
-- the caller's error. Call them in autocommit mode (or commit right after): the open row is written in
-- the caller's transaction.

-- Takes the lock (now or waiting) and opens its hold: the record, written through record_holds (which
-- also closes the open holds of the key whose holder backend is gone). Returns the hold's id, or NULL
-- if not granted. The backend's start is read as the caller: pg_stat_activity shows a role its own
-- backends. node: who holds it, as the history shows it (default: application_name, else 'sql').
CREATE FUNCTION ${schema}.take_hold(p_namespace text, p_name text, p_node text, p_wait boolean) RETURNS bigint
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_id bigint := ('x' || substr(md5(gen_random_uuid()::text), 1, 16))::bit(64)::bigint & 9223372036854775807;
  v_start timestamptz;
  v_node text := coalesce(nullif(p_node, ''), nullif(current_setting('application_name'), ''), 'sql');
BEGIN
  IF NOT ${schema}.take_lock(p_namespace, p_name, false, p_wait, false) THEN
    RETURN NULL;
  END IF;
  BEGIN
    SELECT a.backend_start INTO v_start FROM pg_stat_activity a WHERE a.pid = pg_backend_pid();
    PERFORM ${schema}.record_holds(ARRAY[v_id], ARRAY[p_namespace], ARRAY[p_name],
      ARRAY[${schema}.key(p_namespace, p_name)], ARRAY[v_node], ARRAY[pg_backend_pid()], ARRAY[v_start],
      ARRAY[clock_timestamp()], ARRAY[NULL::timestamptz], ARRAY['open'], ARRAY[NULL::text], ARRAY[NULL::text],
      ARRAY[NULL::text], ARRAY[NULL::text]);
    RETURN v_id;
  EXCEPTION WHEN OTHERS OR query_canceled THEN
    PERFORM pg_advisory_unlock(${schema}.key(p_namespace, p_name)); -- an error means nothing is held
    RAISE;
  END;
END
$$;

-- Takes the lock if free now and opens its hold: the hold's id, or NULL if not granted.
CREATE FUNCTION ${schema}.try_lock_with_history(namespace text, name text, node text DEFAULT NULL) RETURNS bigint
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  SELECT ${schema}.take_hold(namespace, name, node, false)
$$;

-- Waits for the lock (bounded as lock() is) and opens its hold: the hold's id.
CREATE FUNCTION ${schema}.lock_with_history(namespace text, name text, node text DEFAULT NULL) RETURNS bigint
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  SELECT ${schema}.take_hold(namespace, name, node, true)
$$;

-- Releases the lock of an open hold of this backend and ends the hold: 'failed' with the error when
-- error_message or error_class is given, else 'released'. The error is trimmed as Java trims it
-- (message 2,000 characters, stack 8,000). If the lock was no longer held (unlocked by hand), the
-- result is false and loss_cause is NOT_HELD: the hold ends 'lost', or 'failed' with an error, as run
-- puts a failure before a loss.
CREATE FUNCTION ${schema}.unlock_with_history(hold_id bigint, error_message text DEFAULT NULL,
    error_class text DEFAULT NULL, error_stack text DEFAULT NULL) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  v_hold ${schema}.lock_history%ROWTYPE;
  v_held boolean;
  v_failed boolean := error_message IS NOT NULL OR error_class IS NOT NULL;
BEGIN
  SELECT * INTO v_hold FROM ${schema}.lock_history h WHERE h.id = hold_id FOR UPDATE;
  IF NOT FOUND OR v_hold.pid <> pg_backend_pid() OR v_hold.outcome <> 'open' THEN
    RAISE EXCEPTION 'pglock: hold % is not an open hold of this connection (%)', hold_id,
      CASE WHEN NOT FOUND THEN 'no such hold: was the transaction that opened it rolled back?'
           WHEN v_hold.pid <> pg_backend_pid() THEN 'it belongs to backend ' || v_hold.pid
           ELSE 'it ended already as ' || v_hold.outcome END
      USING ERRCODE = 'PGL02',
            HINT = 'end a hold once, on the connection that opened it; a lock whose hold is lost is released by pglock.unlock(namespace, name)';
  END IF;
  v_held := pg_advisory_unlock(v_hold.key);
  UPDATE ${schema}.lock_history h
     SET released_at = clock_timestamp(),
         outcome = CASE WHEN v_failed THEN 'failed' WHEN NOT v_held THEN 'lost' ELSE 'released' END,
         loss_cause = CASE WHEN NOT v_held THEN 'NOT_HELD' END,
         error_class = CASE WHEN v_failed THEN left(coalesce(unlock_with_history.error_class, 'error'), 200) END,
         error_message = CASE WHEN v_failed THEN left(unlock_with_history.error_message, 2000) END,
         error_stack = CASE WHEN v_failed THEN left(unlock_with_history.error_stack, 8000) END
   WHERE h.id = hold_id;
  RETURN v_held;
END
$$;

-- The NOTIFY channel of this schema's job table, as the Java queue names it (DefaultJobQueue.channel):
-- pglock_jobs_ and the CRC-32 (IEEE) of the schema's name in hex.
CREATE FUNCTION ${schema}.job_channel() RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_bytes bytea := convert_to('${schema}', 'UTF8');
  v_crc bigint := 4294967295;
BEGIN
  FOR i IN 0 .. length(v_bytes) - 1 LOOP
    v_crc := v_crc # get_byte(v_bytes, i);
    FOR b IN 1 .. 8 LOOP
      v_crc := CASE WHEN v_crc & 1 = 1 THEN (v_crc >> 1) # 3988292384 ELSE v_crc >> 1 END;
    END LOOP;
  END LOOP;
  RETURN 'pglock_jobs_' || to_hex(v_crc # 4294967295);
END
$$;

-- Checks a kind, queue or key as JobRequest.checkName does: 1 to 200 characters, no control characters.
CREATE FUNCTION ${schema}.check_job_name(p_what text, p_value text) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF p_value IS NULL OR p_value = '' OR char_length(p_value) > 200 THEN
    RAISE EXCEPTION 'pglock.enqueue: % must be 1 to 200 characters, got %', p_what,
      CASE WHEN p_value IS NULL THEN 'null' ELSE char_length(p_value) || ' characters' END
      USING ERRCODE = '22023', HINT = 'pass a non-empty ' || p_what || ' of at most 200 characters';
  END IF;
  IF p_value ~ '[\u0001-\u001f\u007f-\u009f]' THEN
    RAISE EXCEPTION 'pglock.enqueue: % must not contain control characters, got "%"', p_what,
      regexp_replace(p_value, '[\u0001-\u001f\u007f-\u009f]', '?', 'g')
      USING ERRCODE = '22023', HINT = 'remove tabs, newlines and other control characters';
  END IF;
END
$$;

-- Enqueues a job in the caller's transaction; returns its id. With a unique key that an unfinished
-- job (available, running, retryable) holds already, nothing is inserted and that job's id is
-- returned, as a Java enqueue does. run_at and delay are exclusive; neither: due now (database clock).
-- max_attempts NULL: the worker's setting for the kind. Not granted to PUBLIC: grant EXECUTE to the
-- roles that may hand work to the workers.
CREATE FUNCTION ${schema}.enqueue(kind text, payload jsonb DEFAULT 'null', queue text DEFAULT 'default',
    priority integer DEFAULT 0, run_at timestamptz DEFAULT NULL, delay interval DEFAULT NULL,
    max_attempts integer DEFAULT NULL, unique_key text DEFAULT NULL, concurrency_key text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  v_id bigint;
  v_run_at timestamptz;
BEGIN
  PERFORM ${schema}.check_job_name('kind', enqueue.kind);
  PERFORM ${schema}.check_job_name('queue', enqueue.queue);
  IF enqueue.unique_key IS NOT NULL THEN
    PERFORM ${schema}.check_job_name('unique_key', enqueue.unique_key);
  END IF;
  IF enqueue.concurrency_key IS NOT NULL THEN
    PERFORM ${schema}.check_job_name('concurrency_key', enqueue.concurrency_key);
  END IF;
  IF enqueue.priority IS NULL OR enqueue.priority NOT BETWEEN -32768 AND 32767 THEN
    RAISE EXCEPTION 'pglock.enqueue: priority must be between -32768 and 32767, got %', coalesce(enqueue.priority::text, 'null')
      USING ERRCODE = '22023', HINT = 'higher runs first; 0 is the default';
  END IF;
  IF enqueue.max_attempts IS NOT NULL AND enqueue.max_attempts < 1 THEN
    RAISE EXCEPTION 'pglock.enqueue: max_attempts must be at least 1, got %', enqueue.max_attempts
      USING ERRCODE = '22023', HINT = 'pass NULL for the worker''s setting for the kind';
  END IF;
  IF enqueue.run_at IS NOT NULL AND enqueue.delay IS NOT NULL THEN
    RAISE EXCEPTION 'pglock.enqueue: run_at (%) and delay (%) were both given', enqueue.run_at, enqueue.delay
      USING ERRCODE = '22023', HINT = 'pass one of them: run_at for an instant, delay for a wait after now()';
  END IF;
  IF enqueue.delay IS NOT NULL AND (enqueue.delay < interval '0' OR enqueue.delay > interval '36500 days') THEN
    RAISE EXCEPTION 'pglock.enqueue: delay must be between zero and 36500 days, got %', enqueue.delay
      USING ERRCODE = '22023', HINT = 'for an instant, pass run_at';
  END IF;
  IF enqueue.run_at IS NOT NULL AND NOT isfinite(enqueue.run_at) THEN
    RAISE EXCEPTION 'pglock.enqueue: run_at must be a finite time, got %', enqueue.run_at
      USING ERRCODE = '22023', HINT = 'a job that should never run need not be enqueued';
  END IF;
  v_run_at := coalesce(enqueue.run_at, now() + coalesce(enqueue.delay, interval '0'));
  -- A unique job whose holder finishes between our insert and our look-up is inserted on the next
  -- pass, as the Java enqueue does.
  FOR pass IN 1 .. 3 LOOP
    INSERT INTO ${schema}.job AS j (queue, kind, payload, priority, run_at, max_attempts, unique_key, concurrency_key)
    VALUES (enqueue.queue, enqueue.kind, coalesce(enqueue.payload, 'null'::jsonb), enqueue.priority::smallint, v_run_at,
            enqueue.max_attempts, enqueue.unique_key, enqueue.concurrency_key)
    ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL AND state IN ('available', 'running', 'retryable')
    DO NOTHING
    RETURNING j.id INTO v_id;
    IF v_id IS NOT NULL THEN
      -- The wake-up a Java enqueue sends: "<queue> <due> <sent>", epoch ms by the database's clock
      -- (due rounded up, sent down). Sent at commit, and not at all if the transaction rolls back.
      PERFORM pg_notify(${schema}.job_channel(), enqueue.queue || ' '
        || ceil(extract(epoch FROM v_run_at) * 1000)::bigint || ' '
        || floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint);
      RETURN v_id;
    END IF;
    SELECT j.id INTO v_id FROM ${schema}.job j
     WHERE j.unique_key = enqueue.unique_key AND j.state IN ('available', 'running', 'retryable');
    IF v_id IS NOT NULL THEN
      RETURN v_id;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'pglock.enqueue: unique key % was taken and freed again repeatedly while enqueuing', enqueue.unique_key
    USING ERRCODE = 'PGQ01', HINT = 'try again';
END
$$;
REVOKE ALL ON FUNCTION ${schema}.enqueue(text, jsonb, text, integer, timestamptz, interval, integer, text, text) FROM PUBLIC;
