-- pglock schema, version 6: the locks view also shows the namespace of the holder's PgLocks.
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- A lock's own namespace (namespace, name) and the namespace of the instance that holds it can
-- differ: an instance may lock any key. pglock puts its namespace last in application_name
-- (pglock:<node>:<role>:<namespace>), cut to fit 63 bytes.

CREATE OR REPLACE VIEW ${schema}.locks AS
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
       CASE WHEN NOT l.granted THEN pg_blocking_pids(l.pid) END AS blocked_by,
       CASE WHEN a.application_name LIKE 'pglock:%'
            THEN nullif(substr(a.application_name, length(split_part(a.application_name, ':', 1)
                 || ':' || split_part(a.application_name, ':', 2) || ':' || split_part(a.application_name, ':', 3)) + 2), '')
       END AS holder_namespace
  FROM pg_locks l
  LEFT JOIN pg_stat_activity a ON a.pid = l.pid
  LEFT JOIN ${schema}.lock_name n ON l.objsubid = 1 AND n.key = ((l.classid::bigint << 32) | l.objid::bigint)
 WHERE l.locktype = 'advisory'
   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database());
