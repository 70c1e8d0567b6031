-- pglock schema, version 11: the trace context of a job (module pglock-queue).
-- ${schema} is the schema name (default pglock), a placeholder Flyway and Liquibase substitute.
--
-- When a JobQueue has tracing set (JobQueueBuilder.tracing), an enqueue stores the context current on
-- the enqueuing thread (for OpenTelemetry the W3C headers: {"traceparent": "00-...", "tracestate": ...}),
-- and the worker that claims the job gets it back with the claim's row, to continue the trace around
-- each attempt. Without tracing, or with nothing to carry, the column stays null: a null costs no
-- space in the row (one bit of its null bitmap) and the worker reads nothing.
--
-- jsonb rather than text: the value is a small map of string to string, so a JSON object keeps it
-- self-describing and generic (any propagator's keys, with no format of pglock's own to escape), the
-- server checks it is well formed, and an operator can query it like payload and errors
-- (trace_context->>'traceparent' finds the trace of a failed job). A hundred bytes or so: never
-- TOASTed, and the conversion to and from text costs the server next to nothing.
--
-- A nullable column without a default: adding it only changes the catalog (no rewrite, no scan, a
-- brief ACCESS EXCLUSIVE lock), and rows written before it read as null. Not indexed.

ALTER TABLE ${schema}.job ADD COLUMN trace_context jsonb;
