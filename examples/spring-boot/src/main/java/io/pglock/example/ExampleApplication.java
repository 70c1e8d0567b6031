package io.pglock.example;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A small service on pglock's starter. Run two of them (the second with {@code --server.port=8081}
 * and the first one's database URL) to see the fleet: the report runs once per slot, the
 * dispatcher on one node only, and welcome emails on whichever node claims them.
 */
@SpringBootApplication
@EnableScheduling
public class ExampleApplication {
  /**
   * Starts the service.
   *
   * @param args Spring Boot arguments, such as {@code --spring.datasource.url=...}
   */
  public static void main(String[] args) {
    SpringApplication.run(ExampleApplication.class, args);
  }
}
