package io.pglock.bench;

/**
 * The child side of a B8 contender: one system's leader election, driven by {@link ContenderMain}.
 * Implementations print {@code ELECTED} and {@code REVOKED} from the library's own callbacks, so that
 * the time is taken where an application would start or stop its work.
 */
interface ElectionContender extends AutoCloseable {
  /** Joins the election and prints {@code STANDING} once this node waits for leadership. */
  void stand() throws Exception;

  /** Leaves cleanly, as a node that shuts down would; returns once the library let go (bounded). */
  void leave() throws Exception;

  /** Whether the library says this node leads now. */
  boolean isLeader();

  /** Releases what is left (connections, clients); never throws for an already closed one. */
  @Override
  void close();
}
