package io.pglock.queue;

/**
 * The outcome of an enqueue.
 *
 * @param id the job's id: the new job's, or, for a unique job whose key was taken, the id of the
 *     unfinished job that holds the key
 * @param created false when a unique job's key was taken and nothing was inserted
 */
public record Enqueued(long id, boolean created) {}
