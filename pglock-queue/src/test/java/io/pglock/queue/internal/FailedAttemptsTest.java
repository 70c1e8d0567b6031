package io.pglock.queue.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.queue.Backoff;
import io.pglock.queue.ClaimMode;
import io.pglock.queue.DiscardJobException;
import io.pglock.queue.WorkerConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The decision on a failed attempt, without a database: retried, discarded or cancelled, never no outcome. */
class FailedAttemptsTest {
  private static final Claims NO_CLAIMS = null; // the decision never asks about ownership

  private static FailedAttempts failures(Backoff backoff) {
    return new FailedAttempts(new WorkerConfig("q", 1, Map.of(), Map.of(), 3, backoff, ClaimMode.ADVISORY,
        Duration.ofSeconds(30), true, Duration.ofSeconds(1), Duration.ofSeconds(1), 0, Duration.ZERO,
        Duration.ofDays(1), Duration.ofDays(7), 1));
  }

  private static RunningJob attempt(int attempt, int max) {
    return new RunningJob(7, "q", "k", attempt, max, "null", false, null, 42, NO_CLAIMS);
  }

  @Test
  void anAttemptBeforeTheLast_isRetriedAfterTheBackoff() {
    Outcome o = failures(a -> Duration.ofMillis(250L * a)).outcome(attempt(2, 3), new IllegalStateException("boom"));
    assertThat(List.of(o.state(), o.delayMillis(), o.attempt(), o.owner())).containsExactly("retryable", 500L, 2, 42L);
    assertThat(o.errorClass()).isEqualTo(IllegalStateException.class.getName());
    assertThat(o.errorMessage()).isEqualTo("boom");
    assertThat(o.errorStack()).contains("FailedAttemptsTest");
  }

  @Test
  void theLastAttempt_orADiscardException_isDiscarded() {
    FailedAttempts f = failures(Backoff.standard());
    assertThat(f.outcome(attempt(3, 3), new RuntimeException("x")).state()).isEqualTo("discarded");
    assertThat(f.outcome(attempt(1, 3), new DiscardJobException("no use")).state()).isEqualTo("discarded");
  }

  @Test
  void aCancelledJob_isCancelled() {
    RunningJob job = attempt(1, 3);
    job.cancel();
    assertThat(failures(Backoff.standard()).outcome(job, new InterruptedException()).state()).isEqualTo("cancelled");
  }

  @Test
  void aBackoffThatThrows_stillGivesAnOutcome_aRetryInAMinute() {
    Outcome o = failures(a -> {
      throw new ArithmeticException("bad backoff");
    }).outcome(attempt(1, 3), new RuntimeException("x"));
    assertThat(o.state()).isEqualTo("retryable");
    assertThat(o.delayMillis()).isEqualTo(FailedAttempts.FALLBACK_DELAY_MILLIS);
    assertThat(o.errorMessage()).contains("bad backoff");
  }

  @Test
  void nulInAMessage_isEscaped_forPostgresText() {
    Outcome o = failures(Backoff.standard()).outcome(attempt(1, 3), new RuntimeException("a\0b"));
    assertThat(o.errorMessage()).isEqualTo("a\\0b");
  }
}
