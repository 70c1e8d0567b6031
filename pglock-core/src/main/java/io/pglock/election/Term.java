package io.pglock.election;

import java.time.Instant;
import java.util.Objects;

/**
 * One node's term as leader of an election: a value, fixed when the term began.
 *
 * <p>The fencing token comes with the grant of the election's lock ({@code withFencing()}): it is
 * larger than the token of every earlier term of the same election, across restarts, crashes and
 * failovers (see {@code docs/fencing.md}). To refuse a stale leader's writes, check it inside the
 * write's transaction on the writer's connection:
 * {@code SELECT pglock.check_fencing_token(term.namespace(), term.lockName(), term.fencingToken())}.
 *
 * @param election the election's name
 * @param node the leader's node name ({@code PgLocksBuilder.nodeName})
 * @param fencingToken the term's fencing token: strictly increasing per election, positive
 * @param began when this node was elected, by its own wall clock
 * @param namespace the namespace of the election's lock (that of its {@code PgLocks})
 * @param lockName the name of the election's lock in that namespace: {@code "election:<election>"}
 */
public record Term(String election, String node, long fencingToken, Instant began, String namespace,
    String lockName) {

  /**
   * Checks the components.
   *
   * @param election the election's name
   * @param node the leader's node name
   * @param fencingToken the term's fencing token
   * @param began when the term began
   * @param namespace the namespace of the election's lock
   * @param lockName the name of the election's lock
   * @throws NullPointerException if a component is null
   * @throws IllegalArgumentException if the token is not positive
   */
  public Term {
    Objects.requireNonNull(election, "election");
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(began, "began");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(lockName, "lockName");
    if (fencingToken <= 0) {
      throw new IllegalArgumentException("fencingToken must be positive: " + fencingToken);
    }
  }
}
