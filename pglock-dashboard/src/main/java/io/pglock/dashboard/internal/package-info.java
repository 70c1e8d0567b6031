/** The dashboard's implementation: routing, queries, page models; not an API. */
package io.pglock.dashboard.internal;
