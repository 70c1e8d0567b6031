package io.pglock.bench;

/** What B8 does to the leader of a fleet. */
enum Fault {
  /** The leader leaves cleanly: pglock {@code close()}, Curator {@code latch.close()}, Spring {@code stop()}. */
  CLEAN("clean handover"),
  /** SIGKILL of the leader's JVM: its sockets close, the kernel tells the servers. */
  SIGKILL("leader SIGKILL"),
  /** {@code pg_terminate_backend} of the leader's database backends (those holding the lock, for pglock). */
  TERMINATE("pg_terminate_backend"),
  /** SIGSTOP of the leader's JVM until a successor is elected (then SIGCONT): its sockets stay open. */
  PAUSE("leader SIGSTOP");

  final String label;

  Fault(String label) {
    this.label = label;
  }
}
