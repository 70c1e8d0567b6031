/** Binds pglock's Micrometer meters (module pglock-micrometer) to the application's registry. */
package io.pglock.spring.metrics;
