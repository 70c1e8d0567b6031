package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.queue.Job;
import io.pglock.queue.JobAdmin;
import io.pglock.queue.JobQueue;
import io.pglock.queue.JobRequest;
import io.pglock.queue.JobState;
import io.pglock.queue.JobWorker;
import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@code pglock jobs} against jobs this test enqueues (and its workers run) in queues of its own. */
@ExtendWith(NoLeakedLocks.class)
class JobsCommandTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final String NODE = "cli-jobs-node";

  private final String queue = "cli-jobs-" + UUID.randomUUID().toString().substring(0, 8);
  /** A queue no job of this test is in. */
  private final String emptyQueue = queue + "-empty";
  private final List<AutoCloseable> open = new ArrayList<>();
  private final JobAdmin admin = JobAdmin.of(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  private JobQueue jobs;

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @AfterEach
  void cleanUp() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    try (Connection c = TestDatabase.get().connect();
        PreparedStatement ps = c.prepareStatement("DELETE FROM pglock.job WHERE queue = ?")) {
      ps.setString(1, queue);
      ps.execute();
    }
  }

  private JobQueue jobs() {
    if (jobs == null) {
      PgLocks locks = PgLocks.builder(TestDatabase.get().dataSource()).nodeName(NODE).build();
      open.add(locks);
      jobs = JobQueue.builder(locks).build();
      open.add(jobs);
    }
    return jobs;
  }

  private long enqueue(JobRequest request) {
    return jobs().enqueue(request.queue(queue)).id();
  }

  /** A worker on the test's queue: one attempt unless the job says otherwise; a failed attempt returns after 1 h. */
  private io.pglock.queue.JobWorkerBuilder worker() {
    return jobs().worker(queue).maxAttempts(1).pollInterval(Duration.ofMillis(100))
        .shutdownTimeout(Duration.ofSeconds(5)).backoff(attempt -> Duration.ofHours(1));
  }

  private JobWorker start(io.pglock.queue.JobWorkerBuilder builder) {
    JobWorker worker = builder.start();
    open.add(worker);
    return worker;
  }

  private JobState state(long id) {
    return admin.job(id).map(Job::state).orElse(null);
  }

  private void awaitState(long id, JobState state) {
    Await.until("job " + id + " " + state, WAIT, () -> state(id) == state);
  }

  /** {@code pglock jobs <words...> --url ... [--user ...] [--password ...]}. */
  private static CliRun jobsCli(String... words) {
    TestDatabase db = TestDatabase.get();
    List<String> args = new ArrayList<>(List.of("jobs"));
    args.addAll(List.of(words));
    args.addAll(List.of("--url", db.jdbcUrl()));
    if (db.user() != null) {
      args.addAll(List.of("--user", db.user()));
    }
    if (db.password() != null) {
      args.addAll(List.of("--password", db.password()));
    }
    return CliRun.of(args.toArray(String[]::new));
  }

  private static String nl() {
    return System.lineSeparator();
  }

  @Test
  void jobs_countsEachStatePerQueue_withTheOldestDueAge_andNoJobsIsExitCode1() {
    CliRun none = jobsCli("--queue", queue);
    assertThat(none.exitCode()).as(none.describe()).isEqualTo(ExitCodes.NO_JOB);
    assertThat(none.out()).isEqualTo("no jobs in queue " + queue + nl());

    // due 90 s ago and never taken (no worker handles "idle"), and one not due for an hour
    Instant past = Instant.now().minusSeconds(90);
    enqueue(JobRequest.of("idle", null).runAt(past));
    enqueue(JobRequest.of("idle", null).runAt(past.plusSeconds(5)));
    enqueue(JobRequest.of("ok", null).delay(Duration.ofHours(1)));
    CliRun waiting = jobsCli("--queue", queue);
    assertThat(waiting.exitCode()).as(waiting.describe()).isEqualTo(ExitCodes.OK);
    assertThat(waiting.out().lines().toList()).as(waiting.describe()).hasSize(2);
    assertThat(waiting.out().lines().findFirst().orElseThrow())
        .matches("QUEUE\\s+AVAILABLE\\s+RUNNING\\s+RETRYABLE\\s+SUCCEEDED\\s+DISCARDED\\s+CANCELLED\\s+OLDEST DUE");
    assertThat(waiting.rows(queue)).as(waiting.describe())
        .singleElement().satisfies(cells -> {
          assertThat(cells.subList(0, 7)).containsExactly(queue, "3", "0", "0", "0", "0", "0");
          assertThat(cells.get(7)).as("the oldest due job waited 90 s").matches("1m(3\\d|[4-5]\\d)s");
        });

    // every state once: succeeded, discarded, retryable, running, cancelled; the idle ones stay due
    long succeeded = enqueue(JobRequest.of("ok", null));
    long discarded = enqueue(JobRequest.of("fail", null));
    long retryable = enqueue(JobRequest.of("fail", null).maxAttempts(2));
    long running = enqueue(JobRequest.of("block", null));
    long cancelled = enqueue(JobRequest.of("idle", null).delay(Duration.ofHours(1)));
    assertThat(admin.cancel(cancelled)).isTrue();
    CountDownLatch release = new CountDownLatch(1);
    start(worker().concurrency(2)
        .handler("ok", Object.class, (p, ctx) -> {})
        .handler("fail", Object.class, (p, ctx) -> {
          throw new IllegalStateException("boom");
        })
        .handler("block", Object.class, (p, ctx) -> release.await(WAIT.toSeconds(), TimeUnit.SECONDS)));
    open.add(release::countDown); // closed before the worker
    awaitState(succeeded, JobState.SUCCEEDED);
    awaitState(discarded, JobState.DISCARDED);
    awaitState(retryable, JobState.RETRYABLE);
    awaitState(running, JobState.RUNNING);

    CliRun all = jobsCli();
    assertThat(all.exitCode()).as(all.describe()).isEqualTo(ExitCodes.OK);
    assertThat(all.rows(queue)).as(all.describe()).singleElement().satisfies(cells -> {
      assertThat(cells.subList(0, 7)).containsExactly(queue, "3", "1", "1", "1", "1", "1");
      assertThat(cells.get(7)).as("the idle jobs are still due").matches("\\d+m\\d\\ds");
    });
    assertThat(all.rows(emptyQueue)).isEmpty();
    release.countDown();
    awaitState(running, JobState.SUCCEEDED);
  }

  @Test
  void jobs_onAnotherSchemaOrAnUnreachableServer_exitWithTheirCodes() {
    CliRun missing = jobsCli("--schema", "no_such_schema_cli_jobs");
    assertThat(missing.exitCode()).as(missing.describe()).isEqualTo(ExitCodes.SCHEMA_MISSING);
    assertThat(missing.err()).startsWith("pglock jobs: the job table no_such_schema_cli_jobs.job is missing");

    CliRun unreachable = CliRun.of("jobs", "failed", "--url", "jdbc:postgresql://127.0.0.1:1/test");
    assertThat(unreachable.exitCode()).as(unreachable.describe()).isEqualTo(ExitCodes.UNREACHABLE);
    assertThat(unreachable.err()).startsWith("pglock jobs failed: could not list discarded jobs");

    CliRun badLimit = jobsCli("failed", "--limit", "0");
    assertThat(badLimit.exitCode()).as(badLimit.describe()).isEqualTo(ExitCodes.USAGE);
    assertThat(badLimit.err()).contains("--limit must be from 1 to 10000");
  }

  @Test
  void failed_listsDiscardedAndRetryableJobs_newestFirst_oneLineEach_andShowPrintsEveryError() {
    long discarded = enqueue(JobRequest.of("fail", null));
    long retryable = enqueue(JobRequest.of("flaky", null).maxAttempts(3));
    enqueue(JobRequest.of("ok", null));
    String longMessage = "boom " + "x".repeat(300) + "\nsecond line";
    start(worker()
        .backoff(attempt -> attempt == 1 ? Duration.ofMillis(10) : Duration.ofHours(1))
        .handler("ok", Object.class, (p, ctx) -> {})
        .handler("fail", Object.class, (p, ctx) -> {
          throw new IllegalStateException(longMessage);
        })
        .handler("flaky", Object.class, (p, ctx) -> {
          throw new IOException("flaky " + ctx.attempt());
        }));
    awaitState(discarded, JobState.DISCARDED);
    Await.until("the flaky job's second failure", WAIT,
        () -> admin.job(retryable).map(j -> j.state() == JobState.RETRYABLE && j.attempt() == 2).orElse(false));

    CliRun failed = jobsCli("failed", "--queue", queue);
    assertThat(failed.exitCode()).as(failed.describe()).isEqualTo(ExitCodes.OK);
    List<String> lines = failed.out().lines().toList();
    assertThat(lines).as(failed.describe()).hasSize(3);
    assertThat(lines.get(0)).matches("ID\\s+QUEUE\\s+KIND\\s+STATE\\s+ATTEMPT\\s+FAILED\\s+NODE\\s+ERROR");
    List<List<String>> newer = failed.rows(Long.toString(retryable));
    assertThat(newer).as(failed.describe()).singleElement().satisfies(cells -> {
      assertThat(cells.subList(1, 5)).containsExactly(queue, "flaky", "retryable", "2/3");
      assertThat(cells.get(5)).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");
      assertThat(cells.subList(6, 8)).containsExactly(NODE, "java.io.IOException: flaky 2");
    });
    assertThat(lines.get(1)).as("newest first").startsWith(retryable + " ");
    List<List<String>> older = failed.rows(Long.toString(discarded));
    assertThat(older).as(failed.describe()).singleElement().satisfies(cells -> {
      assertThat(cells.subList(1, 5)).as("no limit of its own: the worker's, written into the row by the claim")
          .containsExactly(queue, "fail", "discarded", "1/1");
      assertThat(cells.get(7)).as("cut to fit").hasSize(JobsCommand.ERROR_WIDTH)
          .startsWith("java.lang.IllegalStateException: boom xxx").endsWith("xxx...");
    });

    CliRun one = jobsCli("failed", "--queue", queue, "--limit", "1");
    assertThat(one.out().lines().toList()).as(one.describe()).hasSize(2);
    assertThat(one.rows(Long.toString(retryable))).hasSize(1);
    CliRun all = jobsCli("failed", "--limit", "10000");
    assertThat(all.exitCode()).as(all.describe()).isEqualTo(ExitCodes.OK);
    assertThat(all.rows(Long.toString(discarded))).as("with every queue's").hasSize(1);
    CliRun none = jobsCli("failed", "--queue", emptyQueue);
    assertThat(none.exitCode()).as(none.describe()).isEqualTo(ExitCodes.NO_JOB);
    assertThat(none.out()).isEqualTo("no failed jobs in queue " + emptyQueue + nl());

    CliRun show = jobsCli("show", Long.toString(retryable));
    assertThat(show.exitCode()).as(show.describe()).isEqualTo(ExitCodes.OK);
    List<String> shown = show.out().lines().toList();
    assertThat(shown).as(show.describe()).contains("job              " + retryable, "queue            " + queue,
        "kind             flaky", "state            retryable", "attempt          2 of 3", "node             " + NODE,
        "payload          null", "errors (2, oldest first):", "  java.io.IOException: flaky 1",
        "  java.io.IOException: flaky 2");
    assertThat(shown).anyMatch(l -> l.matches("run at           \\S+Z \\(in (59m\\d\\ds|1h00m)\\)"));
    int first = shown.indexOf("  java.io.IOException: flaky 1");
    int second = shown.indexOf("  java.io.IOException: flaky 2");
    assertThat(shown.get(first - 1)).matches("attempt 1  \\S+Z  node " + NODE);
    assertThat(shown.get(second - 1)).matches("attempt 2  \\S+Z  node " + NODE);
    assertThat(shown.subList(first, second)).as("no stack but the last attempt's").noneMatch(l -> l.contains(" at "));
    assertThat(shown.subList(second + 1, shown.size())).as("the last attempt's stack")
        .anyMatch(l -> l.startsWith("        at io.pglock.cli.JobsCommandTest"));

    CliRun showDiscarded = jobsCli("show", Long.toString(discarded));
    assertThat(showDiscarded.out()).as("the whole message").contains("  java.lang.IllegalStateException: " + longMessage
        .replace("\n", nl() + "  "));
    assertThat(showDiscarded.out()).as("the worker's limit, written into the row by the claim")
        .contains("attempt          1 of 1");

    CliRun missing = jobsCli("show", Long.toString(Long.MAX_VALUE));
    assertThat(missing.exitCode()).as(missing.describe()).isEqualTo(ExitCodes.NO_JOB);
    assertThat(missing.err()).isEqualTo("pglock jobs show: no job " + Long.MAX_VALUE + nl());
    assertThat(missing.out()).isEmpty();
  }

  @Test
  void retryDiscardCancelDelete_changeTheJob_orSayWhatStateItIsInAndWhatAppliesInstead() {
    long job = enqueue(JobRequest.of("idle", null).delay(Duration.ofHours(1)));
    String id = Long.toString(job);

    CliRun retryAvailable = jobsCli("retry", id);
    assertThat(retryAvailable.exitCode()).as(retryAvailable.describe()).isEqualTo(ExitCodes.NO_JOB);
    assertThat(retryAvailable.err()).matches("pglock jobs retry: job " + id + " is available \\(it runs at \\S+Z\\): "
        + "retry applies only to discarded or cancelled jobs; for an available job use pglock jobs cancel " + id
        + " or pglock jobs discard " + id + "\\R");
    CliRun deleteAvailable = jobsCli("delete", id);
    assertThat(deleteAvailable.exitCode()).isEqualTo(ExitCodes.NO_JOB);
    assertThat(deleteAvailable.err()).contains("job " + id + " is available")
        .contains("delete applies only to succeeded, discarded or cancelled jobs");
    assertThat(state(job)).as("nothing changed").isEqualTo(JobState.AVAILABLE);

    CliRun discard = jobsCli("discard", id);
    assertThat(discard.exitCode()).as(discard.describe()).isEqualTo(ExitCodes.OK);
    assertThat(discard.out()).isEqualTo("job " + id + ": discarded" + nl());
    assertThat(state(job)).isEqualTo(JobState.DISCARDED);
    CliRun discardAgain = jobsCli("discard", id);
    assertThat(discardAgain.exitCode()).isEqualTo(ExitCodes.NO_JOB);
    assertThat(discardAgain.err()).isEqualTo("pglock jobs discard: job " + id + " is discarded: discard applies only "
        + "to available or retryable jobs; for a discarded job use pglock jobs retry " + id + " or pglock jobs delete "
        + id + nl());

    CliRun retry = jobsCli("retry", id);
    assertThat(retry.exitCode()).as(retry.describe()).isEqualTo(ExitCodes.OK);
    assertThat(retry.out()).isEqualTo("job " + id + ": retried: available now (queue " + queue + ", attempt 1 next)" + nl());
    Job retried = admin.job(job).orElseThrow();
    assertThat(retried.state()).isEqualTo(JobState.AVAILABLE);
    assertThat(retried.runAt()).as("now, not in an hour").isBefore(Instant.now().plusSeconds(60));

    CliRun cancel = jobsCli("cancel", id);
    assertThat(cancel.exitCode()).as(cancel.describe()).isEqualTo(ExitCodes.OK);
    assertThat(cancel.out()).isEqualTo("job " + id + ": cancelled" + nl());
    assertThat(state(job)).isEqualTo(JobState.CANCELLED);
    CliRun cancelAgain = jobsCli("cancel", id);
    assertThat(cancelAgain.exitCode()).isEqualTo(ExitCodes.NO_JOB);
    assertThat(cancelAgain.err()).contains("job " + id + " is cancelled: cancel applies only to available, running or "
        + "retryable jobs; for a cancelled job use pglock jobs retry " + id + " or pglock jobs delete " + id);

    // a retry that would make two unfinished jobs with one unique key
    long keyed = enqueue(JobRequest.of("idle", null).delay(Duration.ofHours(1)).uniqueKey(queue + ":k"));
    assertThat(admin.discard(keyed)).isTrue();
    enqueue(JobRequest.of("idle", null).delay(Duration.ofHours(1)).uniqueKey(queue + ":k"));
    CliRun conflict = jobsCli("retry", Long.toString(keyed));
    assertThat(conflict.exitCode()).as(conflict.describe()).isEqualTo(ExitCodes.NO_JOB);
    assertThat(conflict.err()).startsWith("pglock jobs retry: could not retry job " + keyed
        + ": an unfinished job holds its unique key");
    assertThat(state(keyed)).isEqualTo(JobState.DISCARDED);

    CliRun delete = jobsCli("delete", id);
    assertThat(delete.exitCode()).as(delete.describe()).isEqualTo(ExitCodes.OK);
    assertThat(delete.out()).isEqualTo("job " + id + ": deleted" + nl());
    assertThat(admin.job(job)).isEmpty();
    for (String action : List.of("retry", "discard", "cancel", "delete", "show")) {
      CliRun gone = jobsCli(action, id);
      assertThat(gone.exitCode()).as(action + ": " + gone.describe()).isEqualTo(ExitCodes.NO_JOB);
      assertThat(gone.err()).isEqualTo("pglock jobs " + action + ": no job " + id + nl());
    }

    assertThat(jobsCli("retry", "abc").exitCode()).as("not an id").isEqualTo(ExitCodes.USAGE);
    assertThat(jobsCli("retry").exitCode()).as("no id").isEqualTo(ExitCodes.USAGE);
  }

  @Test
  void cancel_aRunningJob_asksItToStop_andItEndsCancelled() {
    CountDownLatch stop = new CountDownLatch(1);
    long job = enqueue(JobRequest.of("block", null));
    String id = Long.toString(job);
    start(worker().handler("block", Object.class, (p, ctx) -> {
      // a step that finishes before it looks for a cancel (which interrupts it): it ends when the test says so
      boolean released = false;
      while (!released) {
        try {
          released = stop.await(WAIT.toSeconds(), TimeUnit.SECONDS);
          if (!released) {
            throw new IllegalStateException("not released");
          }
        } catch (InterruptedException e) {
          // told of the cancel; the step goes on
        }
      }
      if (ctx.isCancelled()) {
        throw new InterruptedException("gave up: cancelled");
      }
    }));
    open.add(stop::countDown); // closed before the worker
    awaitState(job, JobState.RUNNING);

    CliRun delete = jobsCli("delete", id);
    assertThat(delete.exitCode()).isEqualTo(ExitCodes.NO_JOB);
    assertThat(delete.err()).isEqualTo("pglock jobs delete: job " + id + " is running (on node " + NODE + "): delete "
        + "applies only to succeeded, discarded or cancelled jobs; for a running job use pglock jobs cancel " + id + nl());

    CliRun cancel = jobsCli("cancel", id);
    assertThat(cancel.exitCode()).as(cancel.describe()).isEqualTo(ExitCodes.OK);
    assertThat(cancel.out()).isEqualTo("job " + id + ": running on node " + NODE + ", asked to stop: it ends cancelled "
        + "if its handler gives up, succeeded if it completes" + nl());
    CliRun show = jobsCli("show", id);
    assertThat(show.out()).as(show.describe()).contains("state            running (cancel requested)");

    stop.countDown();
    awaitState(job, JobState.CANCELLED);
    CliRun shown = jobsCli("show", id);
    assertThat(shown.out()).as(shown.describe()).contains("state            cancelled")
        .contains("  java.lang.InterruptedException: gave up: cancelled");
  }

  @Test
  void jobs_help_showsExamplesAndExitCodes_andPglockListsIt() {
    CliRun run = CliRun.of("jobs", "--help");
    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("pglock jobs failed --queue emails --limit 50").contains("failed", "show", "retry",
        "discard", "cancel", "delete").containsPattern("1\\s+no jobs");
    assertThat(CliRun.of("--help").out()).containsPattern("jobs\\s+Shows the job queues");
  }
}
