package io.pglock.example;

import io.pglock.schedule.RunContext;
import io.pglock.spring.scheduling.PgScheduled;
import io.pglock.spring.scheduling.SchedulerLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/** Scheduled work, once across the fleet. */
@Component
public class Reports {
  private static final Logger log = LoggerFactory.getLogger(Reports.class);
  private final Signups signups;

  Reports(Signups signups) {
    this.signups = signups;
  }

  /** Every 10 seconds, once in the fleet: each slot has a run row in the database. */
  @PgScheduled(cron = "*/10 * * * * *", zone = "UTC")
  void signupReport(RunContext run) {
    log.info("report for slot {}: {} signups (fencing token {})", run.slot(), signups.count(), run.fencingToken());
  }

  /** A ShedLock user's method, unchanged but for the import of {@code @SchedulerLock}. */
  @Scheduled(fixedRate = 30_000)
  @SchedulerLock(name = "cleanup", lockAtLeastFor = "20s")
  public void cleanup() {
    log.info("cleanup ran on this node (the others skipped it)");
  }
}
