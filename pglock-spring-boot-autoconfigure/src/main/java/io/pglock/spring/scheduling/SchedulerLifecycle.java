package io.pglock.spring.scheduling;

import io.pglock.schedule.Scheduler;
import io.pglock.schedule.Task;
import io.pglock.spring.boot.ConnectionBudget;
import io.pglock.spring.boot.PgLockPhases;
import io.pglock.spring.health.HealthDetails;
import java.util.Map;
import org.springframework.context.SmartLifecycle;

/**
 * Registers the {@link PgScheduled} tasks and starts the scheduler when the context starts; closes
 * it (letting running tasks finish within its close timeout) when the context stops, before
 * {@link io.pglock.PgLocks} is closed.
 */
public final class SchedulerLifecycle implements SmartLifecycle, ConnectionBudget, HealthDetails {
  private final Scheduler scheduler;
  private final PgScheduledProcessor processor;
  private volatile boolean running;

  /**
   * Creates the lifecycle.
   *
   * @param scheduler the node's scheduler
   * @param processor the annotated tasks found
   */
  public SchedulerLifecycle(Scheduler scheduler, PgScheduledProcessor processor) {
    this.scheduler = scheduler;
    this.processor = processor;
  }

  @Override
  public void start() {
    for (Task task : processor.tasks()) {
      scheduler.register(task);
    }
    scheduler.start();
    running = true;
  }

  @Override
  public void stop() {
    running = false;
    scheduler.close();
  }

  @Override
  public void stop(Runnable callback) {
    running = false;
    Thread t = new Thread(() -> {
      try {
        scheduler.close();
      } finally {
        callback.run();
      }
    }, "pglock-scheduler-stop");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return PgLockPhases.SCHEDULER;
  }

  @Override
  public void addHealthDetails(Map<String, Object> details) {
    details.put("scheduledTasks", processor.tasks().size());
  }

  @Override
  public int connectionsHeld() {
    return 1;
  }

  @Override
  public String describeConnections() {
    return "1 scheduler connection";
  }
}
