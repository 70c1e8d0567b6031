package io.pglock.queue.internal;

/**
 * A job just claimed by a worker.
 *
 * @param id the job
 * @param kind its kind
 * @param payloadJson its payload
 * @param attempt the attempt started by the claim
 * @param maxAttempts the job's own limit, or null for the worker's setting
 * @param cancelled whether a cancel was asked already
 * @param slotKey the per-key concurrency slot lock it holds, or null
 * @param owner the owner (session) it was claimed under
 * @param traceContext the column {@code trace_context} as JSON text, or null when the job carries none
 */
record Claimed(long id, String kind, String payloadJson, int attempt, Integer maxAttempts, boolean cancelled,
    Long slotKey, long owner, String traceContext) {}
