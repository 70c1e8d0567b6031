/** The scheduler's implementation: the loop, the run table's statements, the schedules. Not an API. */
package io.pglock.schedule.internal;
