-- pglock schema, version 8: singleton scheduled tasks (module pglock-scheduler).
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- A task's slot runs at most once across the fleet because its run row is unique per
-- (namespace, task, slot): a node runs a slot only after inserting that row, and a slot's time
-- comes from the database's clock (the insert requires slot <= now()). Neither table is granted
-- to PUBLIC: grant SELECT, INSERT, UPDATE, DELETE on both to the roles that run tasks (and SELECT,
-- UPDATE on scheduled_task to operators who pause, resume and trigger).

CREATE TABLE ${schema}.scheduled_task (
  namespace    text        NOT NULL,
  name         text        NOT NULL,
  schedule     text        NOT NULL,           -- as the last node that registered it describes it
  paused       boolean     NOT NULL DEFAULT false,
  triggered_at timestamptz,                    -- a manual trigger not yet taken by a node
  next_slot    timestamptz,                    -- the next scheduled slot, as the last claim computed it
  created_at   timestamptz NOT NULL DEFAULT now(), -- the first slot of a fixed-delay task: the same on every node
  updated_at   timestamptz NOT NULL DEFAULT now(),
  updated_by   text,
  PRIMARY KEY (namespace, name)
);

CREATE TABLE ${schema}.task_run (
  namespace     text        NOT NULL,
  task          text        NOT NULL,
  slot          timestamptz NOT NULL,
  kind          text        NOT NULL CHECK (kind IN ('scheduled', 'catch_up', 'manual')),
  state         text        NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'interrupted', 'skipped',
                                                       'disconnected')),
  attempt       integer     NOT NULL DEFAULT 1,
  node          text,
  fencing_token bigint,
  started_at    timestamptz,
  finished_at   timestamptz,
  noticed_at    timestamptz,                   -- when another node noticed that the runner was gone
  detail        text,                          -- why skipped or interrupted
  error_class   text,
  error_message text,
  error_stack   text,
  PRIMARY KEY (namespace, task, slot)
) WITH (fillfactor = 80);                      -- room for the running -> finished update to stay HOT

CREATE INDEX task_run_running ON ${schema}.task_run (namespace, task) WHERE state = 'running';
CREATE INDEX task_run_finished ON ${schema}.task_run (finished_at);
