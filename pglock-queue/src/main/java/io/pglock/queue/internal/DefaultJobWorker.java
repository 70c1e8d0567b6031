package io.pglock.queue.internal;

import io.pglock.queue.ClaimMode;
import io.pglock.queue.JobListener;
import io.pglock.queue.JobTracing;
import io.pglock.queue.JobWorker;
import io.pglock.queue.WorkerConfig;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running {@link JobWorker}: one I/O thread does every round trip (claims with the outcomes of
 * finished attempts, heartbeats, rescues, pruning), and a fixed pool of handler threads runs the
 * jobs. Handler threads never touch the database for the queue, so a slow handler never delays the
 * heartbeat that keeps the other jobs owned.
 */
final class DefaultJobWorker implements JobWorker {
  private static final Logger log = LoggerFactory.getLogger(DefaultJobWorker.class);
  private static final long PRUNE_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(60);
  /**
   * After a round that pruned all it may ({@value #PRUNE_BATCHES_PER_ROUND} full batches), the next
   * comes this soon: a queue finishing more jobs than a round a minute prunes (5,000: 83 a second)
   * would otherwise grow without end. At most 5,000 rows a second per worker while behind.
   */
  private static final long PRUNE_BEHIND_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** A worker's first round, this long after its start (jittered): a restarted fleet catches up soon. */
  private static final long PRUNE_FIRST_NANOS = TimeUnit.SECONDS.toNanos(10);
  private static final int PRUNE_BATCH = 500;
  private static final int PRUNE_BATCHES_PER_ROUND = 10;
  private static final long MAX_RETRY_NANOS = TimeUnit.SECONDS.toNanos(5);
  private static final AtomicInteger WORKERS = new AtomicInteger();
  private static final int MAX_DUES = 1000;
  /** Handlers quicker than this on average let the worker claim ahead ({@link #capacity()}). */
  private static final long QUICK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  /**
   * Jobs held per handler thread while handlers are quick, at least (db-scheduler's lock-and-fetch
   * holds as many) and at most: between the two, as many as {@link #AHEAD_BUDGET_NANOS} of their work.
   * B10's no-op jobs (8 threads): at most 16 per thread gave 11,000-17,000 jobs/s, 64 gave
   * 28,000-32,000, 128 gave 30,000-34,000: a round trip's cost is mostly fixed, so the jobs it carries
   * decide the rate.
   */
  private static final int CLAIM_AHEAD_MIN = 4;
  private static final int CLAIM_AHEAD_MAX = 128;
  /**
   * The most jobs a worker holds at once, however many threads: each holds a session advisory lock
   * while claimed, and the server's lock table, shared by every session, has about 6,400 entries at
   * default settings (max_locks_per_transaction 64 x max_connections 100): a few workers holding
   * thousands each would leave other sessions none.
   */
  static final int MAX_HELD = 1024;
  /** Claims above this many jobs go in steps of it ({@link #claimSize}). */
  static final int CLAIM_STEP = 32;
  /**
   * The work a handler thread may have waiting for it, by the handlers' average: a job claimed ahead
   * waits at most about this long here, while each round trip carries more claims and outcomes. A
   * round trip's cost is mostly fixed (since claims and outcomes commit durably, it includes a WAL
   * flush), so the more jobs it carries the less each pays.
   */
  private static final long AHEAD_BUDGET_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
  /** How often the watch checks ownership: well inside the margin the lease leaves (a tenth of it, 100 ms at least). */
  private static final long WATCH_MILLIS = 50;

  private final DefaultJobQueue jobs;
  private final WorkerConfig config;
  private final Claims claims;
  private final FailedAttempts failures;
  /** The user's listener behind a guard; null when none was set. */
  private final JobListener listener;
  private final ThreadPoolExecutor handlers;
  private final Thread io;
  private final Map<Long, RunningJob> running = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
  private final AtomicLong finished = new AtomicLong();
  private final Object monitor = new Object();
  /** Guarded by monitor: a reason to claim now (a notification, a finished job). */
  private boolean claimNow;
  /**
   * Guarded by monitor: run-ats heard of by notification, epoch ms, earliest first; at most
   * {@link #MAX_DUES} (a later one forgotten is found by the poll).
   */
  private final java.util.TreeSet<Long> dues = new java.util.TreeSet<>();
  private volatile boolean closing;
  /** Set by the I/O thread once it saw closing: it claims nothing after that. */
  private volatile boolean claimsStopped;
  /** A moving average of how long handlers take, in nanoseconds; -1 before the first. */
  private volatile long handlerNanos = -1;
  /** Set when jobs were given up for an expired lease: the I/O thread ends the session first thing. */
  private volatile boolean sessionSuspect;
  private volatile java.util.concurrent.ScheduledFuture<?> watchTask;
  /** Set by close() once the deadline for running jobs has passed: give them back. */
  private volatile boolean giveBack;

  DefaultJobWorker(DefaultJobQueue jobs, WorkerConfig config, JobListener listener) {
    this.jobs = jobs;
    this.config = config;
    this.listener = listener;
    this.claims = config.claimMode() == ClaimMode.ADVISORY ? new AdvisoryClaims(jobs, config)
        : new LeaseClaims(jobs, config);
    this.failures = new FailedAttempts(config);
    int n = WORKERS.incrementAndGet();
    String prefix = "pglock-jobs-" + config.queue() + "-" + n;
    AtomicInteger threads = new AtomicInteger();
    this.handlers = new ThreadPoolExecutor(config.concurrency(), config.concurrency(), 0, TimeUnit.MILLISECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, prefix + "-handler-" + threads.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    this.io = new Thread(this::loop, prefix + "-io");
    this.io.setDaemon(true);
  }

  void start() {
    try {
      claims.open(); // fails here, to the caller, if the database cannot be reached at all
    } catch (SQLException e) {
      handlers.shutdown();
      throw jobs.failure("open the worker's connection", e);
    } catch (RuntimeException e) {
      handlers.shutdown();
      throw e;
    }
    claimNow = true;
    io.start();
    watchTask = jobs.watch().scheduleAtFixedRate(this::checkOwnership, WATCH_MILLIS, WATCH_MILLIS,
        TimeUnit.MILLISECONDS);
    log.debug("worker on queue {} started: {}", config.queue(), config);
  }

  @Override
  public String queue() {
    return config.queue();
  }

  @Override
  public int running() {
    return running.size();
  }

  @Override
  public long finished() {
    return finished.get();
  }

  /** A notification: a job of this queue is due at the instant (epoch ms; 0: now). */
  void dueAt(long epochMillis) {
    synchronized (monitor) {
      if (epochMillis <= System.currentTimeMillis()) {
        claimNow = true;
      } else {
        dues.add(epochMillis + 1); // + 1: the clocks' sub-millisecond parts
        if (dues.size() > MAX_DUES) {
          dues.pollLast();
        }
      }
      monitor.notifyAll();
    }
  }

  /** A notification: an operator asked to cancel the job (if this worker runs it). */
  void cancelRequested(long id) {
    RunningJob job = running.get(id);
    if (job != null) {
      job.cancel();
    }
  }

  // ---------------------------------------------------------------- the I/O thread

  private void loop() {
    long now = System.nanoTime();
    long nextPoll = now;
    long nextRescue = now;
    long nextPrune = now + jitter(PRUNE_FIRST_NANOS);
    long retryNanos = TimeUnit.MILLISECONDS.toNanos(100);
    boolean moreLikely = true;
    while (true) {
      if (closing) {
        claimsStopped = true; // close() may count the running jobs from now on: no claim follows
        wake();
      }
      if (closing && running.isEmpty() && outcomes.isEmpty()) {
        break;
      }
      List<Outcome> batch = List.of();
      try {
        checkOwnership();
        if (sessionSuspect) {
          // jobs were given up for a lease that ran out while the session may have lived on: end it,
          // so that its locks go and those jobs can be found free (by others, or by this worker's
          // next session, whose owner differs)
          sessionSuspect = false;
          claims.close();
        }
        if (claims.needsOpen()) {
          loseAll("its session ended"); // before the new session: the old one's locks may be gone already
          claims.open();
        }
        now = System.nanoTime();
        boolean timeToPoll = now - nextPoll >= 0;
        int free = claimSize(closing ? 0 : capacity() - running.size());
        boolean claim = free > 0 && (takeClaimNow() || timeToPoll || moreLikely);
        batch = drainOutcomes();
        if (claim || !batch.isEmpty()) {
          long sent = System.nanoTime();
          List<Claimed> got = claims.completeAndClaim(batch, claim ? free : 0, heldSlots());
          finished.addAndGet(batch.size());
          batch = List.of();
          if (claim) {
            nextPoll = sent + config.pollInterval().toNanos();
            moreLikely = got.size() == free; // a full batch: there is probably more
            for (Claimed c : got) {
              if (closing) {
                // claimed while close() was called: given back unstarted, with the next round trip
                outcomes.add(new Outcome(c.id(), c.attempt(), "released", 0, null, null, null, c.slotKey(),
                    c.owner()));
              } else {
                run(c);
              }
            }
          }
        }
        now = System.nanoTime();
        if (now - nextRescue >= 0 && !closing) {
          int freed = claims.rescue();
          nextRescue = System.nanoTime() + config.rescueInterval().toNanos();
          if (freed > 0) {
            log.warn("worker on queue {}: {} job(s) of a worker that is gone are available again", config.queue(),
                freed);
            moreLikely = true;
          }
        }
        if (claims.untilHeartbeatNanos(!running.isEmpty()) <= 0) {
          heartbeat();
        }
        if (now - nextPrune >= 0 && !closing) {
          boolean behind = prune();
          nextPrune = System.nanoTime() + (behind ? PRUNE_BEHIND_NANOS : jitter(PRUNE_INTERVAL_NANOS));
        }
        retryNanos = TimeUnit.MILLISECONDS.toNanos(100);
        if (giveBack) {
          giveBackRunning();
        }
        if (!moreLikely || running.size() >= capacity() || closing) {
          awaitWork(nextPoll, nextRescue, nextPrune);
        }
      } catch (SQLException | RuntimeException e) {
        boolean lost = claims.connectionLost(e instanceof SQLException se ? se : null);
        if (lost) {
          loseAll("its connection to the database ended (" + e.getMessage() + ")");
          claims.close();
        } else {
          // The session lives on, but a statement that took locks may have failed after taking them
          // (its UPDATE rolled back, its locks not): let go of every lock no running job owns.
          reconcileLocks();
        }
        if (closing && (running.isEmpty() || lost)) {
          // nothing to write any more, or no connection to write it on: the server freed the locks
          outcomes.clear();
          running.values().forEach(RunningJob::lose);
          break;
        }
        // Outcomes not written go back in line; written later under the owner they were claimed
        // under, they still apply if nobody took the job meanwhile.
        outcomes.addAll(batch);
        log.warn("worker on queue {}: a round trip failed, retrying in {} ms: {}", config.queue(),
            TimeUnit.NANOSECONDS.toMillis(retryNanos), e.toString());
        pause(retryNanos);
        retryNanos = Math.min(MAX_RETRY_NANOS, retryNanos * 2);
      }
    }
    java.util.concurrent.ScheduledFuture<?> w = watchTask;
    if (w != null) {
      w.cancel(false);
    }
    claims.close();
    handlers.shutdown();
    jobs.removed(this);
    log.debug("worker on queue {} stopped", config.queue());
  }

  /**
   * Tells every running handler that its job is no longer owned, when the lease ran out without an
   * answer. Runs on the I/O thread and on the queue's watch thread (which is not held up by a stuck
   * round trip).
   */
  private void checkOwnership() {
    int lostNow = 0;
    for (RunningJob job : running.values()) {
      if (job.notGivenUp() && !claims.owns(job)) {
        job.lose();
        lostNow++;
      }
    }
    if (lostNow > 0) {
      sessionSuspect = true;
      wake();
      log.warn("worker on queue {}: its lease ran out before a round trip could renew it; {} running job(s) may run "
          + "elsewhere now, their handlers are told to stop", config.queue(), lostNow);
    }
  }

  /** After a failed statement on a live session: unlock whatever the session holds that no running job owns. */
  private void reconcileLocks() {
    try {
      int released = claims.reconcile(running.values().stream().filter(RunningJob::notGivenUp).toList());
      if (released > 0) {
        log.warn("worker on queue {}: released {} advisory lock(s) a failed statement had left", config.queue(),
            released);
      }
    } catch (SQLException | RuntimeException e) {
      log.warn("worker on queue {}: could not check its locks after a failed statement ({}); ending its session",
          config.queue(), e.toString());
      loseAll("its locks could not be checked");
      claims.close();
    }
  }

  private void loseAll(String why) {
    if (running.isEmpty()) {
      return;
    }
    log.warn("worker on queue {}: {}; its {} running job(s) may run elsewhere now, their handlers are told to stop",
        config.queue(), why, running.size());
    for (RunningJob job : running.values()) {
      job.lose();
    }
  }

  private void heartbeat() throws SQLException {
    List<Long> ids = new ArrayList<>(running.keySet());
    Claims.Heartbeat beat = claims.heartbeat(ids);
    for (Long id : beat.cancelled()) {
      cancelRequested(id);
    }
    for (Long id : beat.lost()) {
      RunningJob job = running.get(id);
      if (job != null) {
        log.warn("worker on queue {}: {} is no longer ours (its lease ran out); its handler is told to stop",
            config.queue(), job);
        job.lose();
      }
    }
  }

  /** One round of pruning. @return whether it pruned all a round may: more are probably waiting */
  private boolean prune() throws SQLException {
    int total = 0;
    for (int i = 0; i < PRUNE_BATCHES_PER_ROUND; i++) {
      int n = claims.prune(PRUNE_BATCH);
      total += n;
      if (n < PRUNE_BATCH) {
        break;
      }
    }
    if (total > 0) {
      log.debug("worker on queue {}: pruned {} finished job(s)", config.queue(), total);
    }
    jobs.vacuumDue(); // whatever this round pruned: outcomes with a retention of zero delete rows too
    return total == PRUNE_BATCH * PRUNE_BATCHES_PER_ROUND;
  }

  /**
   * After close()'s deadline: the jobs still running go back to available, unlocked, at once, in the
   * same statement as the outcomes of those that finished meanwhile.
   */
  private void giveBackRunning() throws SQLException {
    List<Outcome> write = drainOutcomes();
    java.util.Set<Long> finishedIds = new java.util.HashSet<>();
    for (Outcome o : write) {
      finishedIds.add(o.id());
    }
    int back = 0;
    for (RunningJob job : running.values()) {
      if (job.notGivenUp() && !finishedIds.contains(job.id())) {
        job.lose();
        write.add(Outcome.of(job, "released"));
        back++;
      }
    }
    if (!write.isEmpty()) {
      claims.completeAndClaim(write, 0, List.of());
    }
    if (back > 0) {
      log.warn("worker on queue {}: {} job(s) still running at the shutdown deadline were given back",
          config.queue(), back);
    }
    running.clear(); // their handlers' outcomes are dropped: they are no longer owned
    outcomes.clear(); // (none can be owned now)
  }

  /**
   * How many jobs the worker may hold: its handler threads, and while its handlers are quick (a moving
   * average under {@link #QUICK_NANOS}) {@link #CLAIM_AHEAD_MIN} to {@link #CLAIM_AHEAD_MAX} times that
   * (about {@link #AHEAD_BUDGET_NANOS} of their work), {@link #MAX_HELD} at most, the rest claimed ahead:
   * each round trip then carries more outcomes and claims, which is what keeps short jobs flowing (a
   * job waits here a few quick jobs' time at most). Slow jobs are never
   * claimed ahead (one would wait here while another worker idles), nor jobs under per-key limits
   * (a waiting job would hold a slot).
   */
  private int capacity() {
    long avg = handlerNanos;
    boolean quick = avg >= 0 && avg < QUICK_NANOS;
    if (!quick || config.concurrencyPerKey() != 0) {
      return config.concurrency();
    }
    long ahead = Math.max(CLAIM_AHEAD_MIN, Math.min(CLAIM_AHEAD_MAX, AHEAD_BUDGET_NANOS / Math.max(avg, 1)));
    return (int) Math.max(config.concurrency(), Math.min(MAX_HELD, config.concurrency() * ahead));
  }

  /**
   * How many jobs to claim with this many free: above {@value #CLAIM_STEP}, a multiple of it (the rest
   * comes with the next round trip). A claim's size is written into its statement (see JobSql), so
   * every size is a statement of its own: in steps, a worker uses a few dozen, which the driver and
   * the server keep prepared and planned, instead of parsing and planning most claims afresh.
   */
  static int claimSize(int free) {
    return free <= CLAIM_STEP ? free : free - free % CLAIM_STEP;
  }

  /** The slot locks held by the running jobs (and by outcomes not written yet): a claim must skip them. */
  private List<Long> heldSlots() {
    if (config.concurrencyPerKey() == 0) {
      return List.of();
    }
    List<Long> held = new ArrayList<>();
    for (RunningJob job : running.values()) {
      if (job.slotKey() != null) {
        held.add(job.slotKey());
      }
    }
    for (Outcome o : outcomes) {
      if (o.slotKey() != null) {
        held.add(o.slotKey());
      }
    }
    return held;
  }

  private boolean takeClaimNow() {
    synchronized (monitor) {
      boolean now = claimNow;
      claimNow = false;
      long wall = System.currentTimeMillis();
      while (!dues.isEmpty() && dues.first() <= wall) {
        dues.pollFirst();
        now = true;
      }
      return now;
    }
  }

  private List<Outcome> drainOutcomes() {
    List<Outcome> batch = new ArrayList<>();
    for (Outcome o; (o = outcomes.poll()) != null; ) {
      batch.add(o);
    }
    return batch;
  }

  private void awaitWork(long nextPoll, long nextRescue, long nextPrune) {
    synchronized (monitor) {
      // a reason to claim counts only with a free handler thread: a busy worker waits for an outcome
      while (!(claimNow && !closing && running.size() < capacity()) && outcomes.isEmpty() && !giveBack
          && !(closing && running.isEmpty())) {
        long now = System.nanoTime();
        // a timer counts only if its work would run: no poll without a free thread, nothing but
        // outcomes while closing (else the loop would wake at once, again and again)
        long until = closing ? TimeUnit.MILLISECONDS.toNanos(100) : Math.min(nextRescue, nextPrune) - now;
        if (!closing && running.size() < capacity()) {
          until = Math.min(until, nextPoll - now);
        }
        until = Math.min(until, claims.untilHeartbeatNanos(!running.isEmpty()));
        if (!running.isEmpty()) {
          until = Math.min(until, TimeUnit.MILLISECONDS.toNanos(100)); // the ownership check
        }
        if (!dues.isEmpty() && running.size() < capacity()) {
          until = Math.min(until, TimeUnit.MILLISECONDS.toNanos(dues.first() - System.currentTimeMillis()));
        }
        if (until <= 0) {
          return;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(monitor, until);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  private void pause(long nanos) {
    synchronized (monitor) {
      try {
        TimeUnit.NANOSECONDS.timedWait(monitor, nanos);
      } catch (InterruptedException e) {
        // back to the loop
      }
    }
  }

  private static long jitter(long nanos) {
    return nanos - nanos / 5 + ThreadLocalRandom.current().nextLong(nanos / 5 * 2 + 1);
  }

  // ---------------------------------------------------------------- handler threads

  private void run(Claimed c) {
    WorkerConfig.Registration<?> registration = config.handlers().get(c.kind());
    int max = c.maxAttempts() != null ? c.maxAttempts() : config.maxAttemptsOf(c.kind());
    RunningJob job = new RunningJob(c.id(), config.queue(), c.kind(), c.attempt(), max, c.payloadJson(), c.cancelled(),
        c.slotKey(), c.owner(), claims);
    RunningJob earlier = running.put(c.id(), job);
    if (earlier != null) {
      earlier.lose(); // claimed again, so the earlier attempt (still in its handler) is not ours any more
    }
    String traceContext = c.traceContext();
    handlers.execute(() -> execute(job, registration, traceContext));
  }

  /** @param traceContext the job's column {@code trace_context} (JSON text), or null */
  private <T> void execute(RunningJob job, WorkerConfig.Registration<T> registration, String traceContext) {
    if (job.notGivenUp() && !job.isOwned()) {
      // claimed ahead, and its lock's or lease's deadline passed while it waited here (a pause of the
      // whole process, before the watch thread ran): another worker may run it now, so it never starts
      givenUpPastDeadline(job);
    }
    if (!job.notGivenUp() || closing) {
      // claimed ahead and not started: lost meanwhile (dropped), or the worker is closing (given back
      // unstarted, with the next round trip)
      if (job.notGivenUp()) {
        job.lose();
        outcomes.add(Outcome.of(job, "released"));
      }
      running.remove(job.id(), job);
      wake();
      return;
    }
    job.running(Thread.currentThread());
    GuardedJobTracing tracing = jobs.tracing();
    JobTracing.Attempt traced = tracing == null ? null : tracing.start(job, traceContext);
    Outcome outcome = null;
    Throwable failure = null;
    JobListener.AttemptResult result = JobListener.AttemptResult.ABANDONED;
    long took;
    boolean committed = false; // a handler in a transaction committed its work with the job's success
    try {
      long began = System.nanoTime();
      try {
        T payload = jobs.mapper().read(job.payloadJson(), registration.type());
        if (registration.inTransaction() != null) {
          InTransaction.run(jobs.dataSource(), jobs.sql(), config.retention().isZero(),
              (int) jobs.networkTimeout().toMillis(), job, payload, registration.inTransaction());
          committed = true;
        } else {
          registration.handler().handle(payload, job);
        }
        outcome = Outcome.of(job, "succeeded");
      } catch (InTransaction.NotOwned lost) {
        job.lose(); // another attempt has the job: this one committed nothing and records nothing
      } catch (Throwable t) {
        failure = t;
        outcome = failures.outcome(job, t);
      } finally {
        job.done();
      }
      took = System.nanoTime() - began;
      long avg = handlerNanos;
      handlerNanos = avg < 0 ? took : avg + (took - avg) / 8; // a rough moving average is all it needs
      if (job.notGivenUp() && !job.isOwned()) {
        givenUpPastDeadline(job); // finished past the deadline, before the watch thread noticed: as if it had
      }
      if (job.notGivenUp() || committed) {
        // committed: the success is written, whatever became of the claim since; its outcome, written
        // again, changes no row and lets go of the job's lock
        result = result(outcome.state());
      }
    } finally {
      if (tracing != null) {
        tracing.end(traced, result, failure); // on this thread, once, before the outcome is queued
      }
    }
    if (result == JobListener.AttemptResult.ABANDONED) {
      // another worker may run it now (or will, at the shutdown deadline): this outcome is stale
      log.debug("worker on queue {}: {} finished after it was no longer owned; outcome dropped", config.queue(), job);
      running.remove(job.id(), job);
      wake();
      if (listener != null) {
        listener.attemptEnded(config.queue(), job.kind(), JobListener.AttemptResult.ABANDONED, took);
      }
      return;
    }
    outcomes.add(outcome);
    running.remove(job.id(), job);
    wake();
    if (listener != null) {
      listener.attemptEnded(config.queue(), job.kind(), result, took);
    }
  }

  /** The listener's name for an outcome's state. */
  private static JobListener.AttemptResult result(String state) {
    switch (state) {
      case "succeeded":
        return JobListener.AttemptResult.SUCCEEDED;
      case "retryable":
        return JobListener.AttemptResult.RETRY;
      case "discarded":
        return JobListener.AttemptResult.DISCARDED;
      case "cancelled":
        return JobListener.AttemptResult.CANCELLED;
      default:
        throw new IllegalStateException("an attempt's outcome cannot be " + state);
    }
  }

  /**
   * A job given up on a handler thread because its deadline passed: as when the watch gives it up,
   * the session is ended (its lease may have been renewed since by a late answer, keeping the lock of
   * a job nobody runs any more), so that the job is found free and runs again.
   */
  private void givenUpPastDeadline(RunningJob job) {
    job.lose();
    sessionSuspect = true;
    wake();
  }

  private void wake() {
    synchronized (monitor) {
      claimNow = true;
      monitor.notifyAll();
    }
  }

  // ---------------------------------------------------------------- close

  @Override
  public void close() {
    close(config.shutdownTimeout());
  }

  /** Stops claiming, without waiting (close() follows): a queue closes all its workers at once. */
  void beginClose() {
    closing = true;
    wake();
  }

  @Override
  public boolean close(Duration timeout) {
    closing = true;
    wake();
    long deadline = System.nanoTime() + timeout.toNanos();
    boolean allFinished = true;
    synchronized (monitor) {
      // first until the I/O thread stopped claiming (a claim in flight may still start jobs), then
      // until the running jobs finished
      while ((!claimsStopped || !running.isEmpty()) && io.isAlive()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          allFinished = false;
          break;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(monitor, Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          allFinished = false;
          break;
        }
      }
    }
    if (!allFinished) {
      giveBack = true;
      wake();
    }
    // the last outcomes and the release take a round trip or two, bounded by the network timeout
    long bound = jobs.locks().config().lease().toMillis() + jobs.networkTimeout().toMillis() + 1000;
    try {
      io.join(bound);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (io.isAlive()) {
      log.warn("worker on queue {} did not stop within {} ms; its connection is dropped", config.queue(), bound);
      claims.close();
    }
    ExecutorService pool = handlers;
    pool.shutdownNow();
    return allFinished;
  }

  @Override
  public String toString() {
    return "JobWorker[" + config.queue() + ", " + config.claimMode() + ", " + running.size() + "/"
        + config.concurrency() + " running]";
  }
}
