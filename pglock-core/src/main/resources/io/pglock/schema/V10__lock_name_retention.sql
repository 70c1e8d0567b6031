-- pglock schema, version 10: the name table stays bounded.
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- Until version 9 every name ever locked stayed in lock_name for good: a workload that locks per
-- entity (an order, an invoice) grew it by millions of rows a day. From version 10 each row carries
-- when a node last recorded it (last_seen, refreshed at most once an hour), and prune_lock_names
-- deletes, in batches, the rows not seen for a retention period and the oldest rows past a cap,
-- never the name of a lock that is held or awaited at that moment. PgLocks calls it every ten
-- minutes or so; an operator may call it too.

-- Rows written before this version count as seen long ago ('-infinity': no rewrite of the table), so
-- the first prune removes them unless their lock is held or awaited. New rows get now().
ALTER TABLE ${schema}.lock_name ADD COLUMN last_seen timestamptz NOT NULL DEFAULT '-infinity';
ALTER TABLE ${schema}.lock_name ALTER COLUMN last_seen SET DEFAULT now();
CREATE INDEX lock_name_last_seen ON ${schema}.lock_name (last_seen);

-- The 64-bit keys (objsubid 1) of the advisory locks held or awaited in this database now.
CREATE FUNCTION ${schema}.locked_keys() RETURNS SETOF bigint
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT DISTINCT (l.classid::bigint << 32) | l.objid::bigint
    FROM pg_locks l
   WHERE l.locktype = 'advisory' AND l.objsubid = 1
     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
$$;

-- Records names (arrays of the same length) and refreshes last_seen of those already known, at most
-- once an hour per name (a refresh is a row update: coarse, so that a name locked often costs
-- nothing). The key is computed here, so a name cannot be recorded under a key it does not hash to.
-- Returns the number of rows added or refreshed. A name given twice counts once.
CREATE OR REPLACE FUNCTION ${schema}.record_lock_names(p_namespaces text[], p_names text[]) RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  WITH added AS (
    INSERT INTO ${schema}.lock_name AS t (key, namespace, name)
    SELECT DISTINCT ON (k.key) k.key, k.ns, k.nm
      FROM (SELECT ${schema}.key(n.ns, n.nm) AS key, n.ns, n.nm
              FROM unnest(p_namespaces, p_names) AS n(ns, nm)) k
    ON CONFLICT (key) DO UPDATE SET last_seen = now()
     WHERE t.last_seen < now() - interval '1 hour'
    RETURNING 1)
  SELECT count(*)::integer FROM added
$$;

-- Records the names whose key is held or awaited in this database now, and only those: for
-- transaction locks, which a PgLocks cannot see end. p_keys are the keys the caller computed; a name
-- is recorded only if its key is locked now and is the key the name hashes to. Returns the number of
-- rows added or refreshed.
CREATE FUNCTION ${schema}.record_locked_names(p_keys bigint[], p_namespaces text[], p_names text[])
RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  WITH locked AS MATERIALIZED (
    SELECT n.k, n.ns, n.nm
      FROM unnest(p_keys, p_namespaces, p_names) AS n(k, ns, nm)
     WHERE n.k IN (SELECT ${schema}.locked_keys())),
  added AS (
    INSERT INTO ${schema}.lock_name AS t (key, namespace, name)
    SELECT DISTINCT ON (l.k) l.k, l.ns, l.nm
      FROM locked l
     WHERE ${schema}.key(l.ns, l.nm) = l.k
    ON CONFLICT (key) DO UPDATE SET last_seen = now()
     WHERE t.last_seen < now() - interval '1 hour'
    RETURNING 1)
  SELECT count(*)::integer FROM added
$$;

-- Deletes at most p_batch rows not seen for p_retention, then at most p_batch of the oldest-seen rows
-- while the table has more than p_max_rows, never a row whose key is held or awaited now. One node
-- at a time (a transaction lock; the others return 0 at once). Returns the number of rows deleted:
-- call again while it returns p_batch or more.
CREATE FUNCTION ${schema}.prune_lock_names(p_retention interval, p_max_rows integer, p_batch integer)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_old integer;
  v_over integer;
  v_excess bigint;
BEGIN
  IF p_retention IS NULL OR p_retention < interval '0' OR p_max_rows IS NULL OR p_max_rows < 0
     OR p_batch IS NULL OR p_batch < 1 THEN
    RAISE EXCEPTION 'prune_lock_names(retention %, max_rows %, batch %): retention and max_rows must not be '
      'negative and batch must be at least 1', p_retention, p_max_rows, p_batch
      USING ERRCODE = '22023';
  END IF;
  IF NOT pg_try_advisory_xact_lock(${schema}.key('pglock', 'prune-lock-names')) THEN
    RETURN 0;
  END IF;
  -- Names of locks held or awaited now are never deleted: the view shows them.
  WITH locked AS MATERIALIZED (SELECT ${schema}.locked_keys() AS key),
  doomed AS (
    SELECT n.key FROM ${schema}.lock_name n
     WHERE n.last_seen < now() - p_retention AND n.key NOT IN (SELECT key FROM locked)
     ORDER BY n.last_seen
     LIMIT p_batch)
  DELETE FROM ${schema}.lock_name n USING doomed d WHERE n.key = d.key;
  GET DIAGNOSTICS v_old = ROW_COUNT;
  SELECT count(*) - p_max_rows INTO v_excess FROM ${schema}.lock_name;
  v_over := 0;
  IF v_excess > 0 THEN
    WITH locked AS MATERIALIZED (SELECT ${schema}.locked_keys() AS key),
    doomed AS (
      SELECT n.key FROM ${schema}.lock_name n
       WHERE n.key NOT IN (SELECT key FROM locked)
       ORDER BY n.last_seen
       LIMIT least(v_excess, p_batch))
    DELETE FROM ${schema}.lock_name n USING doomed d WHERE n.key = d.key;
    GET DIAGNOSTICS v_over = ROW_COUNT;
  END IF;
  RETURN v_old + v_over;
END
$$;
