package io.pglock.schedule;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A registered task as the database knows it ({@code <schema>.scheduled_task}), with its latest runs.
 *
 * @param name the task's name
 * @param schedule the schedule, as the last node that registered the task described it
 * @param paused whether it is paused
 * @param triggeredAt a manual trigger that no node has taken yet
 * @param nextSlot the next scheduled slot, as the last run computed it
 * @param updatedAt when the row last changed
 * @param updatedBy the node or operator that changed it last
 * @param lastRuns the latest runs, newest first
 */
public record TaskStatus(String name, String schedule, boolean paused, Optional<Instant> triggeredAt,
    Optional<Instant> nextSlot, Instant updatedAt, Optional<String> updatedBy, List<TaskRun> lastRuns) {
}
