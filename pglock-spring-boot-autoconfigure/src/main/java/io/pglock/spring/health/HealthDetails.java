package io.pglock.spring.health;

import java.util.Map;

/** A pglock bean that adds what it does to the health details: elections led, workers, tasks. */
public interface HealthDetails {
  /**
   * Adds details; called on the health check's thread, must not block on the database.
   *
   * @param details the details so far
   */
  void addHealthDetails(Map<String, Object> details);
}
