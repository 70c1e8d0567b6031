package io.pglock.schedule;

import java.time.Instant;
import java.util.Optional;

/**
 * One row of a task's run history ({@code <schema>.task_run}): one slot, and what happened to it.
 *
 * @param task the task's name
 * @param slot the slot, on the database's clock (for a manual run: when it was triggered)
 * @param kind why it ran
 * @param state what happened
 * @param attempt 1, or more when a disconnected run was retried
 * @param node the node that ran (or skipped) it
 * @param fencingToken the fencing token of the run's task lock; 0 when it did not run
 * @param startedAt when it started (database clock)
 * @param finishedAt when it finished (database clock)
 * @param noticedAt when another node noticed that its runner was gone
 * @param detail why it was skipped or interrupted, or which earlier attempt disconnected
 * @param errorClass the class of the error a failed run threw
 * @param errorMessage its message
 * @param errorStack its stack, trimmed
 */
public record TaskRun(String task, Instant slot, RunKind kind, RunState state, int attempt, Optional<String> node,
    long fencingToken, Optional<Instant> startedAt, Optional<Instant> finishedAt, Optional<Instant> noticedAt,
    Optional<String> detail, Optional<String> errorClass, Optional<String> errorMessage,
    Optional<String> errorStack) {
}
