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
   * True once the run has been told to stop (deadline, lock lost, scheduler closing); the thread is
   * also interrupted.
   *
   * @return whether to stop
   */
  boolean stopRequested();
}
