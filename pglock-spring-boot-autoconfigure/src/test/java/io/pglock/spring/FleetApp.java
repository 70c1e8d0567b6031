package io.pglock.spring;

import io.pglock.queue.JobContext;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobRequest;
import io.pglock.schedule.RunContext;
import io.pglock.spring.leader.LeaderOnly;
import io.pglock.spring.leader.LeadershipChangedEvent;
import io.pglock.spring.queue.PgJobHandler;
import io.pglock.spring.scheduling.PgScheduled;
import io.pglock.spring.scheduling.SchedulerLock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationListener;
import org.springframework.context.Lifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

/**
 * The test app: one bean of each kind the starter serves. What the beans see is recorded in static
 * fields keyed by node name, since two contexts of the app run in one JVM.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableTransactionManagement
@Import({FleetApp.Tasks.class, FleetApp.Handlers.class, FleetApp.Signups.class, FleetApp.ReportLeader.class})
class FleetApp {
  /** Slots run by {@link Tasks#everySecond}, with the node that ran each: slot -> nodes. */
  static final Map<Instant, Queue<String>> SLOTS = new ConcurrentHashMap<>();
  /** Payloads handled, with the node. */
  static final Queue<String> HANDLED = new ConcurrentLinkedQueue<>();
  /** Leader-only bean state per node: true while started. */
  static final Map<String, Boolean> LEADING = new ConcurrentHashMap<>();
  /** Leadership events per node. */
  static final Queue<String> EVENTS = new ConcurrentLinkedQueue<>();
  /** Calls of the ShedLock-style method that ran (not skipped). */
  static final AtomicInteger LOCKED_RUNS = new AtomicInteger();
  /** Holds the ShedLock-style method inside its lock until counted down. */
  static volatile CountDownLatch lockedGate = new CountDownLatch(0);

  static void reset() {
    SLOTS.clear();
    HANDLED.clear();
    LEADING.clear();
    EVENTS.clear();
    LOCKED_RUNS.set(0);
  }

  /** A job payload. */
  record Greeting(String to, int times) {}

  @Component
  static class Tasks {
    private final String node;

    Tasks(org.springframework.core.env.Environment env) {
      this.node = env.getProperty("pglock.node-name");
    }

    @PgScheduled(name = "every-second", fixedRate = "${test.rate:1s}")
    void everySecond(RunContext run) {
      SLOTS.computeIfAbsent(run.slot(), s -> new ConcurrentLinkedQueue<>()).add(node + "#" + run.fencingToken());
    }

    @SchedulerLock(name = "report", lockAtLeastFor = "${test.at-least:0s}")
    public void report() throws InterruptedException {
      LOCKED_RUNS.incrementAndGet();
      lockedGate.await(60, TimeUnit.SECONDS);
    }
  }

  @Component
  static class Handlers {
    private final String node;

    Handlers(org.springframework.core.env.Environment env) {
      this.node = env.getProperty("pglock.node-name");
    }

    @PgJobHandler(kind = "greet")
    void greet(Greeting greeting, JobContext job) {
      HANDLED.add(node + ":" + greeting.to() + "x" + greeting.times() + "@" + job.attempt());
    }
  }

  @Component
  static class Signups {
    private final JobQueue jobs;

    Signups(JobQueue jobs) {
      this.jobs = jobs;
    }

    /** Enqueues a greeting in the caller's transaction, then fails if asked: the job must go too. */
    @Transactional
    public long signUp(String who, boolean fail) {
      long id = jobs.enqueue(JobRequest.of("greet", new Greeting(who, 1))).id();
      if (fail) {
        throw new IllegalStateException("signup of " + who + " failed after its enqueue");
      }
      return id;
    }
  }

  @Component
  @LeaderOnly("reports")
  static class ReportLeader implements Lifecycle {
    private final String node;
    private volatile boolean running;

    ReportLeader(org.springframework.core.env.Environment env) {
      this.node = env.getProperty("pglock.node-name");
    }

    @Override
    public void start() {
      running = true;
      LEADING.put(node, true);
    }

    @Override
    public void stop() {
      running = false;
      LEADING.put(node, false);
    }

    @Override
    public boolean isRunning() {
      return running;
    }
  }

  @Bean
  ApplicationListener<LeadershipChangedEvent> leadershipEvents(org.springframework.core.env.Environment env) {
    String node = env.getProperty("pglock.node-name");
    return e -> EVENTS.add(node + ":" + e.election() + ":" + (e.isLeader() ? "elected" : "revoked"));
  }

  static List<String> leaders() {
    return LEADING.entrySet().stream().filter(Map.Entry::getValue).map(Map.Entry::getKey).sorted().toList();
  }
}
