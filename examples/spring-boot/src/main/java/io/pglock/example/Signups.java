package io.pglock.example;

import io.pglock.queue.JobQueue;
import io.pglock.queue.JobRequest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Records a signup and enqueues its welcome email in one transaction: both or neither. */
@Service
public class Signups {
  private final JdbcTemplate sql;
  private final JobQueue jobs;

  Signups(JdbcTemplate sql, JobQueue jobs) {
    this.sql = sql;
    this.jobs = jobs;
    sql.execute("CREATE TABLE IF NOT EXISTS signup (email text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())");
  }

  /**
   * Signs someone up.
   *
   * @param email who
   * @param fail fail after the enqueue, to show that the job goes with the rolled-back transaction
   * @return the welcome job's id
   */
  @Transactional
  public long signUp(String email, boolean fail) {
    sql.update("INSERT INTO signup(email) VALUES (?) ON CONFLICT DO NOTHING", email);
    long job = jobs.enqueue(JobRequest.of("welcome-email", new Welcome(email))).id();
    if (fail) {
      throw new IllegalStateException("signup of " + email + " failed: rolled back, job " + job + " with it");
    }
    return job;
  }

  /** {@return how many have signed up} */
  public long count() {
    Long n = sql.queryForObject("SELECT count(*) FROM signup", Long.class);
    return n == null ? 0 : n;
  }

  /**
   * A welcome email to send.
   *
   * @param email the address
   */
  public record Welcome(String email) {}
}
