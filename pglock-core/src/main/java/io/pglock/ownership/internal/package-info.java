/**
 * The ownership's implementation: the balancing thread, the fair-share rule and the lock table
 * snapshot. Not an API.
 */
package io.pglock.ownership.internal;
