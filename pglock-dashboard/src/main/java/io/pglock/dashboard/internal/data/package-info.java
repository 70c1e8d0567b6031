/**
 * The dashboard's queries. Every one is index-backed and bounded: lists use keyset pagination,
 * counts stop at a cap and fall back to the planner's estimate, and filters the indexes cannot
 * serve scan a bounded number of rows per page.
 */
package io.pglock.dashboard.internal.data;
