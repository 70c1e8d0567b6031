package io.pglock.bench;

import io.pglock.PgLocks;
import io.pglock.schedule.MissedSlots;
import io.pglock.schedule.Schedule;
import io.pglock.schedule.Scheduler;
import io.pglock.schedule.Task;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

/**
 * pglock in B9: a {@link Scheduler} running task {@value #TASK} on {@code cron "* * * * * *"} (every
 * whole second), {@link MissedSlots#RUN_EACH} up to {@value #CATCH_UP_LIMIT} missed slots, other
 * settings at their defaults; the node's clock may be skewed ({@code SchedulerBuilder.clock}).
 */
final class PglockTicker implements Ticker {
  static final String NAMESPACE = "b9";
  static final String TASK = "tick";
  /**
   * Enough for any outage of the run: a slot found unclaimed more than missedAfter (10 s) late is
   * missed, and RUN_EACH runs the most recent {@value} of those; the server restart takes seconds.
   */
  static final int CATCH_UP_LIMIT = 120;
  /**
   * Cold JVMs started next to five others on a small, busy machine: pglock's default (2 s) is for a
   * warm process (B8's first run lost contenders to it).
   */
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

  private final PgLocks locks;
  private final Scheduler scheduler;

  PglockTicker(Map<String, String> opts, Clock clock, SlotResults results) {
    this.locks = PgLocks.builder(ChildDataSources.simple(opts)).namespace(NAMESPACE).nodeName(opts.get("node"))
        .connectTimeout(CONNECT_TIMEOUT).build();
    this.scheduler = Scheduler.builder(locks).clock(clock).closeTimeout(Duration.ofSeconds(2)).build();
    scheduler.register(Task.builder(TASK, Schedule.cron("* * * * * *"))
        .missedSlots(MissedSlots.RUN_EACH)
        .catchUpLimit(CATCH_UP_LIMIT)
        .missedAfter(Duration.ofSeconds(10)) // set: the default for a per-second task is now 1 s
        .build(ctx -> results.record(ctx.slot())));
  }

  /** The settings in full, for the report. */
  static String settings() {
    return "Scheduler (SchedulerBuilder defaults but closeTimeout 2 s; the +5 s node's clock through "
        + "SchedulerBuilder.clock(Clock.offset(Clock.systemUTC(), 5 s))), Task \"" + TASK + "\" on cron \"* * * * * *\","
        + " MissedSlots.RUN_EACH, catchUpLimit " + CATCH_UP_LIMIT + ", missedAfter 10 s (set), Overlap.SKIP,"
        + " retryDisconnected 1 (defaults); PgLocks defaults but connectTimeout " + CONNECT_TIMEOUT.toSeconds()
        + " s, unpooled PGSimpleDataSource";
  }

  @Override
  public void start() {
    scheduler.start();
  }

  @Override
  public void close() {
    try {
      scheduler.close();
    } finally {
      locks.close();
    }
  }
}
