-- pglock schema, version 12: what the dashboard (module pglock-dashboard) needs.
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- dashboard_action: every action an operator took in the dashboard (retry, discard, cancel or delete
-- jobs; trigger, pause or resume tasks), allowed or refused, with who took it and when. Rows are
-- few (people click), so nothing prunes them; the dashboard reads them newest first by id.
--
-- job_failed: the jobs an operator looks for first (discarded and cancelled), newest first. Partial,
-- so it holds only those rows: a worker that completes a job successfully never touches it, and the
-- queue's hot path pays nothing. Without it, listing the few failures among millions of succeeded
-- jobs would walk job_finished past every succeeded row.

CREATE TABLE ${schema}.dashboard_action (
  id       bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at       timestamptz NOT NULL DEFAULT now(),
  actor    text        NOT NULL,             -- the caller's name, or 'anonymous'
  action   text        NOT NULL,             -- e.g. job.retry, task.pause
  target   text        NOT NULL,             -- e.g. job 42, task billing/nightly, or the bulk filter
  outcome  text        NOT NULL CHECK (outcome IN ('done', 'no_change', 'refused', 'failed')),
  affected integer     NOT NULL DEFAULT 0,   -- how many jobs or tasks changed
  detail   text                              -- why refused or failed
);

CREATE INDEX job_failed ON ${schema}.job (finished_at DESC, id DESC) WHERE state IN ('discarded', 'cancelled');
