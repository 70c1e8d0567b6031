-- pglock schema, version 1: the key derivation as a SQL function.
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- pglock.key(namespace, name) is the 64-bit advisory lock key of a name in a namespace: the first
-- 8 bytes, big-endian, as a signed bigint, of SHA-256 over the UTF-8 bytes of namespace || ':' || name.
-- It is the key io.pglock.LockKey.named(namespace, name) locks, so psql, other languages and DBAs can
-- take or find the same lock:
--   SELECT pg_try_advisory_lock(pglock.key('billing', 'invoice-42'));
--   SELECT * FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
--      AND (classid::bigint << 32 | objid::bigint) = pglock.key('billing', 'invoice-42');
-- The schema itself is created by PgLockSchema.migrate (or by Flyway's `schemas` setting).

CREATE OR REPLACE FUNCTION ${schema}.key(namespace text, name text) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  IF namespace = '' OR strpos(namespace, ':') > 0 THEN
    RAISE EXCEPTION 'pglock namespace must be non-empty and contain no '':'': %', namespace
      USING ERRCODE = '22023';
  END IF;
  IF name = '' THEN
    RAISE EXCEPTION 'pglock lock name must not be empty' USING ERRCODE = '22023';
  END IF;
  RETURN ('x' || encode(substring(sha256(convert_to(namespace || ':' || name, 'UTF8')) FROM 1 FOR 8), 'hex'))
         ::bit(64)::bigint;
END
$$;
