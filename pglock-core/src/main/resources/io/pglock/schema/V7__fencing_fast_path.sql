-- pglock schema, version 7: a fenced grant calls nextval directly once its backend checked the epoch.
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- next_fencing_token is SECURITY DEFINER with a SET search_path clause, which PostgreSQL applies and
-- undoes around every call (and which invalidates the backend's search path cache): most of a fenced
-- grant's server time in version 5. The epoch needs checking once per backend only, so the grant
-- functions, plain SQL that the planner inlines, call it only until the backend is marked checked,
-- and nextval itself after that. USAGE on the sequence (nextval, never setval) is granted to PUBLIC
-- for it: a role can only make tokens skip numbers, never go back.

GRANT USAGE ON SEQUENCE ${schema}.fencing_token_seq TO PUBLIC;

CREATE OR REPLACE FUNCTION ${schema}.try_lock_fenced(p_key bigint) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
  SELECT CASE WHEN pg_catalog.pg_try_advisory_lock(p_key)
              THEN CASE WHEN pg_catalog.current_setting('pglock.fencing_epoch', true) OPERATOR(pg_catalog.=) 'checked'
                        THEN pg_catalog.nextval('${schema}.fencing_token_seq'::pg_catalog.regclass)
                        ELSE ${schema}.next_fencing_token() END
              ELSE 0 END
$$;

CREATE OR REPLACE FUNCTION ${schema}.try_lock_fenced(p_first int, p_second int) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
  SELECT CASE WHEN pg_catalog.pg_try_advisory_lock(p_first, p_second)
              THEN CASE WHEN pg_catalog.current_setting('pglock.fencing_epoch', true) OPERATOR(pg_catalog.=) 'checked'
                        THEN pg_catalog.nextval('${schema}.fencing_token_seq'::pg_catalog.regclass)
                        ELSE ${schema}.next_fencing_token() END
              ELSE 0 END
$$;
