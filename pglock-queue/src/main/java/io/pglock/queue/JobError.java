package io.pglock.queue;

import java.time.Instant;

/**
 * One failed attempt of a job, as kept in {@code job.errors}.
 *
 * @param attempt the attempt's number, from 1
 * @param at when the failure was recorded (database clock)
 * @param node the node that ran the attempt
 * @param errorClass the exception's class, or {@code io.pglock.queue.WorkerLost} when the worker
 *     died or lost its connection during the attempt
 * @param message the exception's message (may be null)
 * @param stack the trimmed stack trace (may be null)
 */
public record JobError(int attempt, Instant at, String node, String errorClass, String message, String stack) {}
