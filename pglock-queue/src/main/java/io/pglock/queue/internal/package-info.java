/** The queue's implementation: not an API, may change in any release. */
package io.pglock.queue.internal;
