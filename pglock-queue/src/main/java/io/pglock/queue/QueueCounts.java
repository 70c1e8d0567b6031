package io.pglock.queue;

import java.time.Duration;
import java.util.Map;

/**
 * How many jobs a queue holds in each state, for operators.
 *
 * @param queue the queue
 * @param counts jobs per state (states with none are absent)
 * @param oldestDueAge how long the oldest due job (available or retryable, run-at passed) has
 *     waited since its run-at, or null when none is due: a growing figure means workers fall behind
 */
public record QueueCounts(String queue, Map<JobState, Long> counts, Duration oldestDueAge) {
  /**
   * {@return the count in a state, 0 if none}
   *
   * @param state the state
   */
  public long count(JobState state) {
    return counts.getOrDefault(state, 0L);
  }
}
