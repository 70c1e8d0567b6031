-- pglock schema, version 15: pruning reads its own queue's finished jobs only.
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- job_prune: a worker prunes its own queue's finished jobs, oldest first, past its own retention.
-- Through job_finished (finished_at) alone, each batch walked past every older finished job of every
-- other queue: on a table holding ten million finished jobs of one queue, kept longer, the workers of
-- a queue with a shorter retention spent seconds per batch there, on the thread that also claims their
-- jobs, and fell behind (docs/benchmarks.md, B17). With the queue first, a batch reads its own rows.
-- A job kept after it finished adds one more index entry; with a retention of zero (the row deleted
-- at once) it adds none. CREATE INDEX holds off writes to the job table while it builds (a few seconds
-- per million finished jobs): migrate when the queue is quiet, or create the index beforehand with
-- CREATE INDEX CONCURRENTLY under this name.

CREATE INDEX IF NOT EXISTS job_prune ON ${schema}.job (queue, finished_at)
  WHERE state IN ('succeeded', 'discarded', 'cancelled');
