-- pglock schema, version 3: names of keys, and a view of every advisory lock in the database.
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- pg_locks shows an advisory lock as numbers (classid, objid, objsubid). pglock records the name of
-- each named key once (a background batch after its first grant, never on the grant's path), so
-- that ${schema}.locks can show names. Locks taken by other tools appear too, with their raw keys,
-- and with their names if they were taken by a name pglock has recorded.

CREATE TABLE ${schema}.lock_name (
  key        bigint      PRIMARY KEY,  -- the 64-bit key of namespace:name (objsubid 1)
  namespace  text        NOT NULL,
  name       text        NOT NULL,
  first_seen timestamptz NOT NULL DEFAULT now()
);
REVOKE ALL ON ${schema}.lock_name FROM PUBLIC;

-- Records names (arrays of the same length), skipping those already known. A name whose key does
-- not match is refused, so that the table cannot be filled with lies.
CREATE FUNCTION ${schema}.record_lock_names(p_namespaces text[], p_names text[]) RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  WITH added AS (
    INSERT INTO ${schema}.lock_name (key, namespace, name)
    SELECT ${schema}.key(n.ns, n.nm), n.ns, n.nm
      FROM unnest(p_namespaces, p_names) AS n(ns, nm)
    ON CONFLICT (key) DO NOTHING
    RETURNING 1)
  SELECT count(*)::integer FROM added
$$;

-- Every advisory lock of this database, held or awaited, one row per holder or waiter.
--   key          the 64-bit key (space 1), or first << 32 | second (as unsigned) for a pair (space 2)
--   first, second  for a pair of 32-bit keys (space 2): the two keys, as pg_advisory_lock(int, int) takes them
--   namespace, name  when pglock has recorded the key's name, else NULL
--   scope        'session' when the lock cannot be a transaction lock (the holder is a pglock lock or
--                wait session, or has no open transaction), else 'session or transaction'
--   node, role   parsed from a pglock application_name (pglock:<node>:<role>:<namespace>)
--   since        for a waiter: when its wait began (pg_locks.waitstart); for a holder: the earliest it
--                can have taken the lock as far as the server can tell (its transaction's start for a
--                lock that may be transaction-scoped, else its connection's start)
--   blocked_by   for a waiter: the pids it waits for
CREATE VIEW ${schema}.locks AS
SELECT (l.classid::bigint << 32) | l.objid::bigint AS key,
       l.objsubid::smallint AS space,
       CASE WHEN l.objsubid = 2 THEN (CASE WHEN l.classid::bigint >= 2147483648
                                           THEN l.classid::bigint - 4294967296 ELSE l.classid::bigint END)::int END
         AS first,
       CASE WHEN l.objsubid = 2 THEN (CASE WHEN l.objid::bigint >= 2147483648
                                           THEN l.objid::bigint - 4294967296 ELSE l.objid::bigint END)::int END
         AS second,
       n.namespace,
       n.name,
       CASE l.mode WHEN 'ExclusiveLock' THEN 'exclusive' WHEN 'ShareLock' THEN 'shared' ELSE l.mode END AS mode,
       l.granted,
       CASE WHEN a.application_name ~ '^pglock:.*:(lock|wait)-[0-9]+:' OR a.xact_start IS NULL THEN 'session'
            ELSE 'session or transaction' END AS scope,
       l.pid,
       CASE WHEN a.application_name LIKE 'pglock:%' THEN split_part(a.application_name, ':', 2) END AS node,
       CASE WHEN a.application_name LIKE 'pglock:%' THEN split_part(a.application_name, ':', 3) END AS role,
       a.application_name,
       a.client_addr,
       a.usename::text AS username,
       CASE WHEN NOT l.granted THEN l.waitstart
            WHEN a.xact_start IS NOT NULL AND a.application_name !~ '^pglock:.*:(lock|wait)-[0-9]+:' THEN a.xact_start
            ELSE a.backend_start END AS since,
       CASE WHEN NOT l.granted THEN pg_blocking_pids(l.pid) END AS blocked_by
  FROM pg_locks l
  LEFT JOIN pg_stat_activity a ON a.pid = l.pid
  LEFT JOIN ${schema}.lock_name n ON l.objsubid = 1 AND n.key = ((l.classid::bigint << 32) | l.objid::bigint)
 WHERE l.locktype = 'advisory'
   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database());

-- The view reads the name table as its owner: a role that may read the view sees names without a
-- privilege on the table.
GRANT SELECT ON ${schema}.locks TO PUBLIC;
