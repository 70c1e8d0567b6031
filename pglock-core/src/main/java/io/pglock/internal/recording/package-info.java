/**
 * The background writers that record what the engine does, off the lock path. Not API.
 *
 * <ul>
 *   <li>{@code BackgroundBatches}: a bounded queue and one thread that writes it in batches on a
 *       borrowed connection, with an optional periodic task; the base of both writers.
 *   <li>{@code HistoryWriter} and {@code HoldRecord}: the lock history (every {@code run} of a lock
 *       with history on), one record per hold's start and end.
 *   <li>{@code NameRecorder} and {@code NameWriter}: the names of named keys held or awaited a
 *       while, so that the locks view shows names; and their pruning.
 * </ul>
 *
 * <p>A package of its own because these classes only receive notes from the engine
 * ({@code io.pglock.internal}) and write them; a slow or absent database delays records, never
 * locks. Their statements stay in {@code io.pglock.internal.Sql}, with every other one.
 */
package io.pglock.internal.recording;
