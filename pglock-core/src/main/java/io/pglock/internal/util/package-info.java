/**
 * Small helpers that the other modules (ownership, scheduler, job queue) share with the core and
 * that need nothing of the lock engine: {@code ChannelListener} (a LISTEN/NOTIFY channel on a
 * connection of its own) and {@code Stacks} (trimmed stack traces and strings for the tables).
 * Not API.
 */
package io.pglock.internal.util;
