package io.pglock.example;

import io.pglock.queue.JobContext;
import io.pglock.spring.queue.PgJobHandler;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/** Sends welcome emails: each job runs on one node of the fleet, retried with backoff if it throws. */
@Component
public class Welcomes {
  private static final Logger log = LoggerFactory.getLogger(Welcomes.class);
  private final AtomicLong sent = new AtomicLong();

  @PgJobHandler(kind = "welcome-email")
  void send(Signups.Welcome welcome, JobContext job) {
    log.info("welcome email to {} (job {}, attempt {})", welcome.email(), job.id(), job.attempt());
    sent.incrementAndGet();
  }

  /** {@return how many this node sent} */
  public long sent() {
    return sent.get();
  }
}
