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
