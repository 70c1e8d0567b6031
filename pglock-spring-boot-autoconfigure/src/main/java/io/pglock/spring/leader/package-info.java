/**
 * Beans that run only on the leader of an election ({@link io.pglock.spring.leader.LeaderOnly}) and
 * the events of leadership changes.
 */
package io.pglock.spring.leader;
