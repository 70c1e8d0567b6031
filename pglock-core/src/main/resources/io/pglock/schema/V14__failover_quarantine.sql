-- pglock schema, version 14: after a failover, no lock is granted until the old primary's leases ran out.
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- Advisory locks are not replicated: a standby promoted to primary starts with none, and would grant
-- any lock at once, while a holder on the old primary may still believe it holds it. A holder whose
-- server process is killed hears so on its socket within milliseconds; a holder whose server machine
-- died, or whose network to it did, hears nothing and believes until its lease deadline. Lock
-- sessions opened on a new primary therefore wait until a lease has passed since it became primary
-- before they take any lock: by then every holder on the old primary has seen its lease run out.
--
-- How a session knows: the WAL timeline (the first 8 hex digits of the current WAL file's name) goes
-- up with every promotion. The one row of primary_epoch remembers the timeline it last saw and since
-- when; the first session on a new timeline moves the row to it, with since = now(), which is at or
-- after the promotion: the wait can be longer than needed, never shorter. The row also keeps the
-- longest lease of any lock session that opened on this database, the lease the old primary's holders
-- may have had (it reached the standby long before the failover).
--
-- A restart of the same server (same timeline) does not start a wait: a server that restarts after a
-- crash ended its connections, and its holders heard so; a machine that reboots takes longer than a
-- lease. An operator who moves the database some other way (a restored backup, a logical copy) makes
-- the next sessions wait a lease too with
--   UPDATE ${schema}.primary_epoch SET since = now();

CREATE TABLE ${schema}.primary_epoch (
  one           boolean     PRIMARY KEY DEFAULT true CHECK (one),
  timeline      integer     NOT NULL,
  since         timestamptz NOT NULL,  -- at or after the time this server became primary on that timeline
  longest_lease interval    NOT NULL   -- the longest lease of a lock session opened here
);
INSERT INTO ${schema}.primary_epoch (timeline, since, longest_lease)
VALUES (('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int, 'epoch', interval '0');
REVOKE ALL ON ${schema}.primary_epoch FROM PUBLIC;

-- How many milliseconds a lock session with this lease must wait before it takes a lock (0 almost
-- always): until the longest lease seen has passed since this server became primary. A read, except
-- on a new timeline or for a longer lease than any before, which write the row.
CREATE FUNCTION ${schema}.lock_quarantine(p_lease interval) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_timeline integer := ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int;
  v_row ${schema}.primary_epoch%ROWTYPE;
BEGIN
  SELECT * INTO v_row FROM ${schema}.primary_epoch;
  IF v_row.timeline IS DISTINCT FROM v_timeline OR v_row.longest_lease < p_lease THEN
    SELECT * INTO v_row FROM ${schema}.primary_epoch FOR UPDATE;
    IF v_row.timeline IS DISTINCT FROM v_timeline THEN
      v_row.timeline := v_timeline;
      v_row.since := now();
    END IF;
    v_row.longest_lease := greatest(v_row.longest_lease, p_lease);
    UPDATE ${schema}.primary_epoch
       SET timeline = v_row.timeline, since = v_row.since, longest_lease = v_row.longest_lease;
  END IF;
  IF v_row.since + v_row.longest_lease <= clock_timestamp() THEN
    RETURN 0;
  END IF;
  RETURN ceil(extract(epoch FROM v_row.since + v_row.longest_lease - clock_timestamp()) * 1000)::bigint;
END
$$;

-- The SQL API's locks (version 13) follow the same rules as Java's lock sessions: refused on a server
-- in recovery, where they would exclude nobody on the primary; and, for session locks, refused on a
-- new primary until the old primary's leases ran out (a transaction lock's holder on the old primary
-- could commit nothing there). Both are errors that say when and how to go on, never a silent false.
CREATE OR REPLACE FUNCTION ${schema}.take_lock(p_namespace text, p_name text, p_shared boolean, p_wait boolean, p_xact boolean)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_key bigint := ${schema}.checked_key(p_namespace, p_name);
  v_wait bigint;
BEGIN
  IF pg_is_in_recovery() THEN
    RAISE EXCEPTION 'pglock: this server is in recovery (a standby), where a lock excludes nobody on the primary'
      USING ERRCODE = '25006',
            HINT = 'connect to the primary: list every host and set target_session_attrs=primary (libpq) or targetServerType=primary (pgjdbc)';
  END IF;
  IF NOT p_xact THEN
    v_wait := ${schema}.lock_quarantine(interval '0');
    IF v_wait > 0 THEN
      RAISE EXCEPTION 'pglock: this server became primary less than a lease ago (a failover): locks are granted here again in % ms', v_wait
        USING ERRCODE = 'PGL03',
              HINT = 'a holder on the former primary may still believe it holds the lock until its lease runs out; try again then';
    END IF;
  END IF;
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
