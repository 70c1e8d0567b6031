package io.pglock.schedule;

import java.time.Instant;
import java.util.Optional;

/** What a run knows about itself: given to {@link TaskBody#run}. */
public interface RunContext {

  /** {@return the task's name} */
  String task();

  /** {@return the slot this run is for, on the database's clock} */
  Instant slot();

  /** {@return why it runs} */
  RunKind kind();

  /** {@return 1 for the first attempt at the slot; more when a disconnected run is retried} */
  int attempt();

  /**
   * The fencing token of the task's lock for this run: larger than every earlier run's. Check it
   * where the task writes ({@code pglock.check_fencing_token(namespace, "task:" + name, token)}) so
   * that a run that lost its lock cannot write after the next one started.
   *
   * @return the token
   */
  long fencingToken();

  /** {@return when the run is interrupted, by this node's clock, if the task has a deadline} */
  Optional<Instant> deadline();

  /** {@return the node that runs it} */
  String node();

  /**
   * True once the run has been told to stop (deadline, scheduler closing) or no longer holds the
   * task's lock; the thread is also interrupted. The lock part is read from the lock itself, not
   * from a flag a callback sets: it turns true at the latest at the lock's lease deadline by this
   * node's monotonic clock, before another node can take the lock and start the next run, even
   * if this process was paused (a stop-the-world pause, SIGSTOP) past the deadline. A lock the
   * server frees at once (its backend terminated, the server crashed) may be taken by another node
   * before this turns true: the fencing token is what makes a late write fail.
   *
   * @return whether to stop
   */
  boolean stopRequested();
}
