package io.pglock.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The queue on the real database: enqueue, run, retry, discard, unique jobs, transactions, cancel, shutdown. */
@ExtendWith(NoLeakedLocks.class)
class JobQueueTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private final QueueFixture f = new QueueFixture();

  record Note(String text) {}

  @AfterEach
  void close() throws Exception {
    f.close();
  }

  private JobWorkerBuilder worker(JobQueue jobs) {
    return jobs.worker(f.queue).pollInterval(Duration.ofMillis(200)).shutdownTimeout(Duration.ofSeconds(5))
        .backoff(attempt -> Duration.ofMillis(10));
  }

  @Test
  void everyJobRunsOnce_andEndsSucceeded_withItsPayload() throws Exception {
    JobQueue jobs = f.jobs("n1");
    Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
    Map<Long, String> texts = new ConcurrentHashMap<>();
    List<JobRequest> requests = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      requests.add(f.job("note", new Note("n" + i)));
    }
    List<Enqueued> ids = jobs.enqueueAll(requests);
    assertThat(ids).hasSize(50).allMatch(Enqueued::created);
    assertThat(ids.stream().map(Enqueued::id)).isSorted().doesNotHaveDuplicates();
    f.closeLater(worker(jobs).concurrency(4).handler("note", Note.class, (note, job) -> {
      runs.computeIfAbsent(job.id(), k -> new AtomicInteger()).incrementAndGet();
      texts.put(job.id(), note.text());
    }).start());
    Await.until("all 50 succeeded", WAIT, () -> f.count("state = 'succeeded'") == 50);
    assertThat(runs).hasSize(50).allSatisfy((id, n) -> assertThat(n.get()).isEqualTo(1));
    for (int i = 0; i < 50; i++) {
      assertThat(texts.get(ids.get(i).id())).as("the payload of the request at %d", i).isEqualTo("n" + i);
    }
    Job job = jobs.admin().job(ids.get(0).id()).orElseThrow();
    assertThat(job.state()).isEqualTo(JobState.SUCCEEDED);
    assertThat(job.attempt()).isEqualTo(1);
    assertThat(job.node()).isEqualTo("n1");
    assertThat(job.finishedAt()).isNotNull();
    assertThat(job.errors()).isEmpty();
  }

  @Test
  void aFailingJob_isRetriedWithBackoff_thenDiscarded_withEveryAttemptsError() throws Exception {
    JobQueue jobs = f.jobs("n1");
    long id = jobs.enqueue(f.job("fail", new Note("x")).maxAttempts(3)).id();
    AtomicInteger attempts = new AtomicInteger();
    f.closeLater(worker(jobs).handler("fail", Note.class, (note, job) -> {
      attempts.incrementAndGet();
      throw new IllegalStateException("boom " + job.attempt());
    }).start());
    Await.until("discarded", WAIT, () -> f.count("state = 'discarded'") == 1);
    Job job = jobs.admin().job(id).orElseThrow();
    assertThat(attempts.get()).isEqualTo(3);
    assertThat(job.attempt()).isEqualTo(3);
    assertThat(job.errors()).extracting(JobError::attempt).containsExactly(1, 2, 3);
    assertThat(job.errors()).extracting(JobError::message).containsExactly("boom 1", "boom 2", "boom 3");
    assertThat(job.lastError().errorClass()).isEqualTo(IllegalStateException.class.getName());
    assertThat(job.lastError().node()).isEqualTo("n1");
    assertThat(job.lastError().stack()).contains("JobQueueTest");
    assertThat(job.lastError().at()).isNotNull();

    // retried by hand: one more attempt, which fails again
    assertThat(jobs.admin().retry(id)).isTrue();
    Await.until("discarded again", WAIT, () -> attempts.get() == 4 && f.count("state = 'discarded'") == 1);
    assertThat(jobs.admin().job(id).orElseThrow().errors()).hasSize(4);
    assertThat(jobs.admin().delete(id)).isTrue();
    assertThat(jobs.admin().job(id)).isEmpty();
  }

  @Test
  void perKindMaxAttempts_andDiscardJobException() throws Exception {
    JobQueue jobs = f.jobs("n1");
    long limited = jobs.enqueue(f.job("flaky", null)).id();
    long hopeless = jobs.enqueue(f.job("bad-input", null)).id();
    f.closeLater(worker(jobs).maxAttempts("flaky", 2).handler("flaky", Object.class, (p, job) -> {
      throw new RuntimeException("flaky");
    }).handler("bad-input", Object.class, (p, job) -> {
      throw new DiscardJobException("no such customer");
    }).start());
    Await.until("both discarded", WAIT, () -> f.count("state = 'discarded'") == 2);
    assertThat(jobs.admin().job(limited).orElseThrow().attempt()).isEqualTo(2);
    Job discarded = jobs.admin().job(hopeless).orElseThrow();
    assertThat(discarded.attempt()).isEqualTo(1);
    assertThat(discarded.lastError().message()).isEqualTo("no such customer");
  }

  @Test
  void enqueueInTheCallersTransaction_existsOnlyIfItCommits() throws Exception {
    JobQueue jobs = f.jobs("n1");
    AtomicInteger ran = new AtomicInteger();
    f.closeLater(worker(jobs).handler("tx", Note.class, (n, job) -> ran.incrementAndGet()).start());
    long rolledBack;
    try (Connection c = TestDatabase.get().connect()) {
      c.setAutoCommit(false);
      rolledBack = jobs.enqueue(c, f.job("tx", new Note("rolled back"))).id();
      c.rollback();
      long committed = jobs.enqueue(c, f.job("tx", new Note("committed"))).id();
      assertThat(jobs.admin().job(committed)).as("invisible before the commit").isEmpty();
      c.commit();
      assertThat(c.getAutoCommit()).isFalse();
    }
    Await.until("the committed job ran", WAIT, () -> f.count("state = 'succeeded'") == 1);
    assertThat(jobs.admin().job(rolledBack)).isEmpty();
    assertThat(ran.get()).isEqualTo(1);
  }

  @Test
  void uniqueJobs_oneUnfinishedJobPerKey_enforcedByTheDatabase() throws Exception {
    JobQueue jobs = f.jobs("n1");
    String key = "invoice-" + f.queue;
    Enqueued first = jobs.enqueue(f.job("u", null).uniqueKey(key));
    Enqueued second = jobs.enqueue(f.job("u", null).uniqueKey(key));
    assertThat(first.created()).isTrue();
    assertThat(second).isEqualTo(new Enqueued(first.id(), false));
    List<Enqueued> batch = jobs.enqueueAll(List.of(f.job("u", null).uniqueKey(key + "-b"), f.job("u", null),
        f.job("u", null).uniqueKey(key + "-b"), f.job("u", null).uniqueKey(key)));
    assertThat(batch.get(0).created()).isTrue();
    assertThat(batch.get(1).created()).isTrue();
    assertThat(batch.get(2)).isEqualTo(new Enqueued(batch.get(0).id(), false));
    assertThat(batch.get(3)).isEqualTo(new Enqueued(first.id(), false));
    assertThat(f.count("true")).isEqualTo(3);

    f.closeLater(worker(jobs).handler("u", Object.class, (p, job) -> {}).start());
    Await.until("all ran", WAIT, () -> f.count("state = 'succeeded'") == 3);
    Enqueued again = jobs.enqueue(f.job("u", null).uniqueKey(key));
    assertThat(again.created()).as("a finished job frees its key").isTrue();
  }

  @Test
  void scheduledJob_runsAtItsTime_notBefore() throws Exception {
    JobQueue jobs = f.jobs("n1");
    Map<Long, Instant> started = new ConcurrentHashMap<>();
    f.closeLater(worker(jobs).pollInterval(Duration.ofSeconds(30)).handler("later", Object.class,
        (p, job) -> started.put(job.id(), Instant.now())).start());
    Instant enqueued = Instant.now();
    long delayed = jobs.enqueue(f.job("later", null).delay(Duration.ofMillis(1500))).id();
    long at = jobs.enqueue(f.job("later", null).runAt(enqueued.plusMillis(800))).id();
    Await.until("both ran", WAIT, () -> started.size() == 2);
    assertThat(Duration.between(enqueued, started.get(delayed))).isGreaterThanOrEqualTo(Duration.ofMillis(1400));
    assertThat(Duration.between(enqueued, started.get(at))).isGreaterThanOrEqualTo(Duration.ofMillis(700));
    // the notification's run-at set a timer: nothing waited for the 30 s poll
    assertThat(Duration.between(enqueued, started.get(delayed))).isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void cancel_anAvailableJobNeverRuns_aRunningJobsHandlerIsTold() throws Exception {
    JobQueue jobs = f.jobs("n1");
    long waiting = jobs.enqueue(f.job("slow", null).delay(Duration.ofHours(1))).id();
    assertThat(jobs.admin().cancel(waiting)).isTrue();
    assertThat(jobs.admin().job(waiting).orElseThrow().state()).isEqualTo(JobState.CANCELLED);

    CountDownLatch startedLatch = new CountDownLatch(1);
    AtomicInteger interrupted = new AtomicInteger();
    f.closeLater(worker(jobs).handler("slow", Object.class, (p, job) -> {
      startedLatch.countDown();
      try {
        Thread.sleep(60_000); // simulated long work, ended by the cancel's interrupt
      } catch (InterruptedException e) {
        if (job.isCancelled()) {
          interrupted.incrementAndGet();
        }
        throw e;
      }
    }).start());
    long running = jobs.enqueue(f.job("slow", null)).id();
    assertThat(startedLatch.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(jobs.admin().cancel(running)).isTrue();
    Await.until("cancelled", WAIT, () -> jobs.admin().job(running).orElseThrow().state() == JobState.CANCELLED);
    assertThat(interrupted.get()).isEqualTo(1);
    assertThat(jobs.admin().cancel(running)).as("finished: nothing to cancel").isFalse();
  }

  @Test
  void gracefulShutdown_letsRunningJobsFinish_andGivesBackThoseThatDoNot() throws Exception {
    JobQueue jobs = f.jobs("n1");
    CountDownLatch started = new CountDownLatch(2);
    long quick = jobs.enqueue(f.job("quick", null)).id();
    long stuck = jobs.enqueue(f.job("stuck", null)).id();
    JobWorker w = worker(jobs).concurrency(2).handler("quick", Object.class, (p, job) -> {
      started.countDown();
      started.await();
      Thread.sleep(300); // simulated work that fits in the shutdown timeout
    }).handler("stuck", Object.class, (p, job) -> {
      started.countDown();
      while (job.isOwned()) {
        Thread.onSpinWait(); // ignores interrupts: only ownership tells it to stop
      }
    }).start();
    assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(w.close(Duration.ofSeconds(2))).as("the stuck job did not finish").isFalse();
    assertThat(jobs.admin().job(quick).orElseThrow().state()).isEqualTo(JobState.SUCCEEDED);
    Job back = jobs.admin().job(stuck).orElseThrow();
    assertThat(back.state()).isEqualTo(JobState.AVAILABLE);
    assertThat(back.attempt()).as("the attempt number only rises (a fencing token)").isEqualTo(1);
    assertThat(back.maxAttempts()).as("but it does not use up an attempt").isEqualTo(26);

    AtomicInteger ranAgain = new AtomicInteger();
    f.closeLater(worker(jobs).handler("stuck", Object.class, (p, job) -> ranAgain.incrementAndGet()).start());
    Await.until("given-back job ran", WAIT, () -> ranAgain.get() == 1);
  }

  @Test
  void concurrencyPerKey_atMostNRunningJobsPerKey_acrossWorkers() throws Exception {
    JobQueue jobsA = f.jobs("a-" + f.queue);
    JobQueue jobsB = f.jobs("b-" + f.queue);
    Map<String, AtomicInteger> now = new ConcurrentHashMap<>();
    Map<String, AtomicInteger> most = new ConcurrentHashMap<>();
    AtomicInteger done = new AtomicInteger();
    JobHandler<Note> handler = (note, job) -> {
      String key = note.text();
      int n = now.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
      most.computeIfAbsent(key, k -> new AtomicInteger()).accumulateAndGet(n, Math::max);
      Thread.sleep(40); // simulated work, long enough for the jobs of a key to meet
      now.get(key).decrementAndGet();
      done.incrementAndGet();
    };
    List<JobRequest> requests = new ArrayList<>();
    for (int i = 0; i < 24; i++) {
      requests.add(f.job("keyed", new Note("customer-a")).concurrencyKey("customer-a-" + f.queue));
      if (i % 2 == 0) {
        requests.add(f.job("keyed", new Note("customer-b")).concurrencyKey("customer-b-" + f.queue));
        requests.add(f.job("keyed", new Note("none")));
      }
    }
    jobsA.enqueueAll(requests);
    for (JobQueue jobs : List.of(jobsA, jobsB)) {
      f.closeLater(worker(jobs).concurrency(6).concurrencyPerKey(2).handler("keyed", Note.class, handler).start());
    }
    Await.until("all ran", WAIT, () -> done.get() == requests.size());
    Await.until("all succeeded", WAIT, () -> f.count("state = 'succeeded'") == requests.size());
    assertThat(most.get("customer-a").get()).as("customer a, limit 2").isEqualTo(2);
    assertThat(most.get("customer-b").get()).as("customer b, limit 2").isLessThanOrEqualTo(2);
    assertThat(most.get("none").get()).as("jobs without a key are not limited").isGreaterThan(2);
  }

  @Test
  void badInput_clearErrors() {
    JobQueue jobs = f.jobs("n1");
    assertThatThrownBy(() -> JobRequest.of("", null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kind must be 1 to 200 characters");
    assertThatThrownBy(() -> JobRequest.of("k", null).priority(40_000)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("priority must be between");
    assertThatThrownBy(() -> jobs.worker(f.queue).start()).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("has no handler");
    assertThatThrownBy(() -> jobs.enqueue(f.job("k", new Object()))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cannot be written as JSON");
    assertThatThrownBy(() -> jobs.worker(f.queue).concurrencyPerKey(1).claimMode(ClaimMode.LEASE)
        .handler("k", Object.class, (p, j) -> {}).start()).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs ClaimMode.ADVISORY");
  }
}
