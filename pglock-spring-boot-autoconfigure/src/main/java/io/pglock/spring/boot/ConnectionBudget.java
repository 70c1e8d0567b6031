package io.pglock.spring.boot;

/**
 * A pglock component that keeps connections of the application's DataSource borrowed for its life:
 * counted by the start-up check that warns when the pool is too small.
 */
public interface ConnectionBudget {
  /** {@return how many connections the component keeps borrowed at most} */
  int connectionsHeld();

  /** {@return what they are, for the start-up log: "1 scheduler connection"} */
  String describeConnections();
}
