package io.pglock.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.pglock.LockHandle;
import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.bench.B10Report.Outcome;
import io.pglock.dashboard.Dashboard;
import io.pglock.dashboard.DashboardServer;
import io.pglock.election.Candidate;
import io.pglock.election.LeaderElection;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import io.pglock.queue.ClaimMode;
import java.net.InetSocketAddress;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * B14: the dashboard on a big table. In a schema of the run's own ({@code pglock_b14_<pid>}, dropped at
 * the end), {@link B14Data} puts 1,000,000 jobs, 100,000 lock-history rows, 20 tasks with their runs and
 * 2,000 recorded actions (the short run: 100,000 and 10,000); two {@code PgLocks} nodes hold locks (one
 * waited for) and stand in an election, so that the locks and elections pages have something to show.
 *
 * <p>Part 1, page latency: a {@link Dashboard} on a HikariCP pool of 4 (its server's threads) served by
 * {@link Dashboard#serve} on loopback; {@link DashboardClient} GETs every page and filter, each
 * {@value #WARM_UP} times unmeasured, then {@value #SAMPLES} times measured (the short run:
 * {@value #SHORT_SAMPLES}), page after page in turn. Goal: p95 <= {@value #GOAL_P95_MS} ms for every page.
 *
 * <p>Part 2, what an open dashboard costs the workers: B10's pglock burn-down (advisory mode, one worker
 * with {@code concurrency(--b10-workers)}, no-op jobs queued beforehand) on a queue of its own in the same
 * big table, with the dashboard closed, open with the default refresh (3 s) and open with a 1 s refresh:
 * {@link OpenDashboard} polls the overview, queues and jobs pages as three browser tabs would. The three
 * run in turn in each round (C A B, then B A C, ...) after an unmeasured warm-up; goal: jobs/s open at
 * least {@value #GOAL_THROUGHPUT}x closed, the median of the rounds' ratios.
 */
final class B14Dashboard implements Benchmark {
  static final int FULL_JOBS = 1_000_000;
  static final int FULL_HISTORY = 100_000;
  static final int SHORT_JOBS = 100_000;
  static final int SHORT_HISTORY = 10_000;
  static final int SAMPLES = 30;
  static final int SHORT_SAMPLES = 5;
  static final int WARM_UP = 3;
  /** Older links followed for the deep pages (short run: {@value #SHORT_DEEP}). */
  static final int DEEP = 100;
  static final int SHORT_DEEP = 5;
  static final double GOAL_P95_MS = 200;
  static final double GOAL_THROUGHPUT = 0.95;
  /** The dashboard's default refresh, and a harsher one. */
  static final Duration REFRESH = Duration.ofSeconds(3);
  static final Duration HARSH_REFRESH = Duration.ofSeconds(1);
  /** Part 2, steady: one window of a pair (a refresh of each page, on average, when open). */
  static final Duration WINDOW = Duration.ofSeconds(3);
  /** Part 2, steady: jobs of one long burn-down (one to four minutes here, 10 to 40 pairs). */
  static final int WINDOW_JOBS = 800_000;
  /** Part 2, steady: pairs wanted; burn-downs are repeated until there are as many, at most {@link #MAX_BURN_DOWNS}. */
  static final int MIN_PAIRS = 40;
  static final int MAX_BURN_DOWNS = 4;
  /** What a browser polls: the pages an operator keeps open. */
  static final List<String> POLLED = System.getProperty("pglock.b14.polled") != null
      ? List.of(System.getProperty("pglock.b14.polled").split(",")) : List.of("/", "/queues", "/jobs");
  static final int WARM_UP_JOBS = 2_000;
  static final int DASHBOARD_POOL = 4;
  static final String DASHBOARD_POOL_NAME = "b14-dashboard";

  @Override
  public String id() {
    return "B14";
  }

  @Override
  public String title() {
    return "the dashboard on a big table (1,000,000 jobs, 100,000 history rows): every page's latency over HTTP,"
        + " and what an open dashboard costs B10's burn-down";
  }

  static boolean shortRun(BenchOptions o) {
    return o.trials() < B10BurnDown.SHORT_BELOW_TRIALS;
  }

  /** A page to time: a label for the table and the path with its query; without a goal if not {@code judged}. */
  record PageSpec(String label, String path, boolean judged) {
    PageSpec(String label, String path) {
      this(label, path, true);
    }
  }

  @Override
  public Report run(Db db, BenchOptions o) throws Exception {
    boolean shortRun = shortRun(o);
    int jobs = shortRun ? SHORT_JOBS : FULL_JOBS;
    int history = shortRun ? SHORT_HISTORY : FULL_HISTORY;
    String schema = "pglock_b14_" + ProcessHandle.current().pid();
    Report r = new Report(id(), title());
    List<AutoCloseable> open = new ArrayList<>();
    CountDownLatch releaseWaiter = new CountDownLatch(1);
    try (Connection c = db.connect(db.runPrefix + "-b14-setup")) {
      try {
        long t0 = System.nanoTime();
        HikariDataSource pool = later(open, db.hikari(DASHBOARD_POOL_NAME, DASHBOARD_POOL));
        PgLockSchema.migrate(pool, schema);
        System.out.printf("  filling %s: %,d jobs, %,d history rows ...", schema, jobs, history);
        System.out.flush();
        Map<String, Double> took = B14Data.fill(c, schema, jobs, history);
        System.out.printf(" %.1f s%n", (System.nanoTime() - t0) / 1e9);
        r.note("data: %s; %,d lock_history rows, %,d task_run rows of 20 tasks, 2,000 dashboard_action rows; filled"
            + " in %s", B14Data.describe(c, schema), history, history / 20 * 20, seconds(took));
        fleet(db, schema, open, releaseWaiter, c);
        Dashboard dashboard = Dashboard.builder(pool).schema(schema).build();
        DashboardServer server = later(open, dashboard.serve(new InetSocketAddress("127.0.0.1", 0)));
        DashboardClient client = new DashboardClient(server.uri());
        pages(c, schema, client, shortRun, r);
        burnDowns(db, o, schema, client, r);
        windows(db, o, schema, client, r);
      } finally {
        releaseWaiter.countDown();
        for (int i = open.size() - 1; i >= 0; i--) {
          try {
            open.get(i).close();
          } catch (Exception e) {
            r.errors.add("closing: " + e);
          }
        }
        try (Statement s = c.createStatement()) {
          s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
      }
    }
    return r;
  }

  private static <T extends AutoCloseable> T later(List<AutoCloseable> open, T c) {
    open.add(c);
    return c;
  }

  private static String seconds(Map<String, Double> took) {
    StringBuilder b = new StringBuilder();
    took.forEach((k, v) -> b.append(b.length() == 0 ? "" : ", ").append(k).append(Report.fmt(" %.1f s", v)));
    return b.toString();
  }

  /**
   * Two nodes in a namespace of the run's own ({@code b14-<pid>}: advisory locks are the database's, not
   * the schema's, so that no other user of the database contends for them): alpha holds inventory and 20
   * order locks, beta waits for inventory; both stand in election billing. Waits until the locks view
   * shows them by name.
   */
  private static void fleet(Db db, String schema, List<AutoCloseable> open, CountDownLatch releaseWaiter,
      Connection c) throws Exception {
    String namespace = "b14-" + ProcessHandle.current().pid();
    PgLocks alpha = later(open, PgLocks.builder(db.simpleDataSource()).schema(schema).namespace(namespace)
        .nodeName(db.nodeName("b14-alpha")).build());
    PgLocks beta = later(open, PgLocks.builder(db.simpleDataSource()).schema(schema).namespace(namespace)
        .nodeName(db.nodeName("b14-beta")).build());
    later(open, alpha.lock("inventory").acquire(Duration.ofSeconds(30)));
    for (int i = 1; i <= 20; i++) {
      later(open, alpha.lock("order-" + i).acquire(Duration.ofSeconds(30)));
    }
    Thread waiter = new Thread(() -> {
      try (LockHandle h = beta.lock("inventory").acquire(Duration.ofMinutes(30))) {
        releaseWaiter.await();
      } catch (Exception e) {
        // closed: the benchmark is over
      }
    }, "b14-waiter");
    waiter.setDaemon(true);
    waiter.start();
    Candidate quiet = new Candidate() {
      @Override
      public void elected(Term term) {}

      @Override
      public void revoked(Term term, Revocation reason) {}
    };
    later(open, LeaderElection.join(alpha, "billing", quiet));
    later(open, LeaderElection.join(beta, "billing", quiet));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (B14Data.one(c, "SELECT count(*) FROM " + schema + ".locks WHERE (name = 'inventory' AND NOT granted)"
        + " OR (name = 'election:billing' AND granted)") < 2) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the fleet's locks did not show by name in " + schema + ".locks in 30 s");
      }
      Thread.sleep(100);
    }
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  /** Part 1: every page, warmed up, then timed in turn. */
  private static void pages(Connection c, String schema, DashboardClient client, boolean shortRun, Report r)
      throws Exception {
    int samples = shortRun ? SHORT_SAMPLES : SAMPLES;
    int deep = shortRun ? SHORT_DEEP : DEEP;
    Instant now = Instant.now().truncatedTo(ChronoUnit.MINUTES);
    long discarded = B14Data.one(c, "SELECT max(id) FROM " + schema + ".job WHERE state = 'discarded'");
    List<PageSpec> specs = new ArrayList<>(List.of(
        new PageSpec("overview", "/"),
        new PageSpec("locks", "/locks"),
        new PageSpec("history", "/history"),
        new PageSpec("history, failed", "/history?failed=1"),
        new PageSpec("history, one lock (shop/inventory)", "/history?namespace=shop&name=inventory"),
        new PageSpec("elections", "/elections"),
        new PageSpec("tasks", "/tasks"),
        new PageSpec("one task (shop/task-2)", "/task?namespace=shop&name=task-2"),
        new PageSpec("queues", "/queues"),
        new PageSpec("jobs", "/jobs")));
    for (String state : List.of("available", "running", "retryable", "succeeded", "discarded", "cancelled")) {
      specs.add(new PageSpec("jobs, state " + state, "/jobs?state=" + state));
    }
    specs.addAll(List.of(
        new PageSpec("jobs, queue emails + available", "/jobs?queue=emails&state=available"),
        new PageSpec("jobs, queue audit + retryable", "/jobs?queue=audit&state=retryable"),
        new PageSpec("jobs, kind report.daily", "/jobs?kind=report.daily"),
        new PageSpec("jobs, enqueued in the last 6 h", "/jobs?from=" + enc(now.minus(6, ChronoUnit.HOURS).toString())),
        new PageSpec("jobs, enqueued 2 days to 1 day ago", "/jobs?from=" + enc(now.minus(2, ChronoUnit.DAYS).toString())
            + "&to=" + enc(now.minus(1, ChronoUnit.DAYS).toString())),
        new PageSpec("jobs, payload {\"customer\": 4242}", "/jobs?payload=" + enc("{\"customer\": 4242}")),
        new PageSpec("jobs, payload text 4242", "/jobs?payload=4242"),
        new PageSpec("jobs, payload {\"customer\": 4242} + discarded",
            "/jobs?state=discarded&payload=" + enc("{\"customer\": 4242}"))));
    specs.add(new PageSpec("jobs, page 2", older(client, "/jobs", 1)));
    specs.add(new PageSpec(Report.fmt("jobs, page %d", deep + 1), older(client, "/jobs", deep)));
    specs.add(new PageSpec("jobs succeeded, page 2", older(client, "/jobs?state=succeeded", 1)));
    specs.add(new PageSpec(Report.fmt("jobs succeeded, page %d", deep + 1), older(client, "/jobs?state=succeeded",
        deep)));
    specs.add(new PageSpec("history, page 2", older(client, "/history", 1)));
    specs.add(new PageSpec("one job (discarded, with its error)", "/jobs/" + discarded));
    specs.add(new PageSpec("actions", "/actions"));
    specs.add(new PageSpec("the stylesheet (no query: the HTTP floor)", "/assets/dashboard.css", false));

    System.out.printf("  %d pages, %d warm-up and %d timed requests each ...", specs.size(), WARM_UP, samples);
    System.out.flush();
    long t0 = System.nanoTime();
    double[][] ms = new double[specs.size()][samples];
    DashboardClient.Answer[] last = new DashboardClient.Answer[specs.size()];
    for (int round = -WARM_UP; round < samples; round++) {
      for (int p = 0; p < specs.size(); p++) {
        DashboardClient.Answer a = client.get(specs.get(p).path(), false);
        if (a.status() != 200) {
          throw new IllegalStateException("GET " + specs.get(p).path() + ": HTTP " + a.status() + ": "
              + a.body().replaceAll("<[^>]*>", " ").replaceAll("\\s+", " ").trim());
        }
        if (round >= 0) {
          ms[p][round] = a.millis();
        }
        last[p] = a;
      }
    }
    System.out.printf(" %.1f s%n", (System.nanoTime() - t0) / 1e9);
    List<String[]> rows = new ArrayList<>();
    int met = 0;
    int judged = 0;
    double worst = 0;
    String worstPage = "";
    for (int p = 0; p < specs.size(); p++) {
      PageSpec s = specs.get(p);
      double p50 = LossLatency.percentile(ms[p], 0.50);
      double p95 = LossLatency.percentile(ms[p], 0.95);
      double max = Arrays.stream(ms[p]).max().orElse(0);
      boolean ok = p95 <= GOAL_P95_MS;
      String figure = Report.fmt("%.1f ms (p50 %.1f, max %.1f)", p95, p50, max);
      if (!s.judged()) {
        r.info(Report.fmt("p95 of %d, %s", samples, s.label()), "-", figure, "-");
      } else {
        judged++;
        met += ok ? 1 : 0;
        if (p95 > worst) {
          worst = p95;
          worstPage = s.label();
        }
        r.limit(Report.fmt("page p95 of %d, %s", samples, s.label()), "-", figure, Report.fmt("<= %.0f ms", GOAL_P95_MS),
            ok);
      }
      rows.add(new String[] {s.label(), s.path(), Report.fmt("%.1f", p50), Report.fmt("%.1f", p95),
          Report.fmt("%.1f", max), Report.fmt("%,d", last[p].body().length()), shown(last[p].body())});
    }
    for (String line : Report.render(new String[] {"page", "GET", "p50 ms", "p95 ms", "max ms", "bytes", "shows"},
        rows).split("\n")) {
      r.note("%s", line);
    }
    r.note("pages: %d of %d with p95 <= %.0f ms; slowest p95 %.1f ms (%s); each page %d times unmeasured, then %d"
        + " times timed, the pages in turn; time = HTTP/1.1 GET on loopback from the send until the whole body is"
        + " read (the server's queries, the template, the transfer); deep pages: the Older link followed %d times",
        met, judged, GOAL_P95_MS, worst, worstPage, WARM_UP, samples, deep);
  }

  /** What a page shows, briefly: its rows, and whether a jobs page stopped at the scan bound. */
  private static String shown(String body) {
    int rows = body.split("<tr", -1).length - 2;
    String s = Math.max(0, rows) + " rows";
    if (body.contains("id=\"scan-note\"")) {
      s += ", stopped at the scan bound";
    }
    if (body.contains("class=\"next\"")) {
      s += ", Older link";
    }
    return s;
  }

  /** {@return the path of the page reached from a page by following its Older link n times} */
  private static String older(DashboardClient client, String from, int n) throws Exception {
    String path = from;
    for (int i = 0; i < n; i++) {
      DashboardClient.Answer a = client.get(path, false);
      String at = path;
      path = a.older().orElseThrow(() -> new IllegalStateException("GET " + at + ": no Older link (HTTP " + a.status()
          + ")"));
    }
    return path;
  }

  /**
   * Part 2: in each round, B10's burn-down with the dashboard closed (C), open at the default refresh (A)
   * and open at 1 s (B), in the order C A B, then B A C; the ratios A/C and B/C per round.
   */
  private static void burnDowns(Db db, BenchOptions o, String schema, DashboardClient client, Report r)
      throws Exception {
    int jobs = B10BurnDown.jobs(o);
    int workers = o.b10Workers();
    int rounds = shortRun(o) ? Math.max(1, o.rounds() / 2) : Math.max(3, o.rounds() / 2);
    String queue = "b14-" + ProcessHandle.current().pid();
    Duration[] sides = {null, REFRESH, HARSH_REFRESH};
    double[][] perSecond = new double[3][rounds];
    List<List<Double>> polls = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
    int[] requests = new int[3];
    int[] skipped = new int[3];
    double[] busySeconds = new double[3];
    long[] dbCpu = new long[3];
    long[] jvmCpu = new long[3];
    double[] burnSeconds = new double[3];
    List<String> failures = new ArrayList<>();
    String settings = null;
    try (Connection monitor = db.connect(db.runPrefix + "-monitor-b14")) {
      for (int i = -1; i < rounds; i++) {
        int[] order = i < 0 ? new int[] {2} : i % 2 == 0 ? new int[] {0, 1, 2} : new int[] {2, 1, 0};
        for (int side : order) {
          PglockBurnDown c = new PglockBurnDown(db, workers, ClaimMode.ADVISORY, "b14", queue,
              "pglock advisory, dashboard " + (sides[side] == null ? "closed" : "open"), QueueInstrumentation.NONE,
              schema);
          settings = c.settings();
          Watched w = new Watched(c, client, sides[side]);
          long db0 = BackendCpu.nanos(monitor, db.runPrefix + "-" + DASHBOARD_POOL_NAME);
          long jvm0 = BackendCpu.threadNanos("pglock-dashboard-");
          Outcome out = B10BurnDown.runOne(db, w, i < 0 ? Math.min(jobs, WARM_UP_JOBS) : jobs, monitor);
          long db1 = BackendCpu.nanos(monitor, db.runPrefix + "-" + DASHBOARD_POOL_NAME);
          long jvm1 = BackendCpu.threadNanos("pglock-dashboard-");
          if (out.error() != null) {
            throw new IllegalStateException("B14 burn-down failed, " + out.name() + ": " + out.error());
          }
          if (i < 0) {
            continue;
          }
          perSecond[side][i] = out.burnDown().jobsPerSecond();
          burnSeconds[side] += out.burnDown().done().toNanos() / 1e9;
          dbCpu[side] = db0 < 0 || db1 < 0 || dbCpu[side] < 0 ? -1 : dbCpu[side] + db1 - db0;
          jvmCpu[side] += jvm1 - jvm0;
          if (w.dashboard != null) {
            busySeconds[side] += Arrays.stream(w.dashboard.millis()).sum() / 1e3;
            for (double v : w.dashboard.millis()) {
              polls.get(side).add(v);
            }
            requests[side] += w.dashboard.millis().length;
            skipped[side] += w.dashboard.skipped();
            failures.addAll(w.dashboard.failures());
          }
        }
      }
    }
    for (int side = 1; side <= 2; side++) {
      Rounds.Paired p = new Rounds.Paired(perSecond[0], perSecond[side]);
      // Informational: separate burn-downs of this table, even neighbours, differ by up to 4x (the queue's
      // dead head, autovacuum), so their ratio cannot resolve 5%; the paired windows (windows()) are judged.
      r.info(Report.fmt("jobs/s, %,d no-op jobs, 1 worker x %d, dashboard open (%d pages, refresh %d s), median of"
          + " the rounds' ratios", jobs, workers, POLLED.size(), sides[side].toSeconds()),
          Report.fmt("%,.0f/s closed", p.baselineMedian()), Report.fmt("%,.0f/s open", p.pglockMedian()),
          Report.fmt("%.2fx", p.ratio()));
      if (dbCpu[side] >= 0 && requests[side] > 0) {
        r.info(Report.fmt("database CPU of the open dashboard (refresh %d s), during the burn-downs",
            sides[side].toSeconds()), "-", Report.fmt("%.1f%% of one CPU (%.1f ms per page refresh)",
            100 * dbCpu[side] / 1e9 / burnSeconds[side], dbCpu[side] / 1e6 / requests[side]), "-");
      }
      r.note("burn-down, refresh %d s: %s (jobs/s); ratio = median of the rounds' ratios", sides[side].toSeconds(),
          p.detail("%.0f").replace("baseline/pglock", "closed/open"));
      double[] v = polls.get(side).stream().mapToDouble(Double::doubleValue).toArray();
      if (v.length > 0) {
        r.note("burn-down, refresh %d s: %d page refreshes during the burn-downs (%d ticks skipped while a refresh"
            + " of the same page ran), p50 %.1f ms, p95 %.1f ms, max %.1f ms; refreshes under way %.1f%% of the"
            + " burn-downs' time (their latencies added up, HTTP floor included)", sides[side].toSeconds(), requests[side],
            skipped[side], LossLatency.percentile(v, 0.5), LossLatency.percentile(v, 0.95),
            Arrays.stream(v).max().orElse(0), 100 * busySeconds[side] / burnSeconds[side]);
        r.note("burn-down, refresh %d s: CPU per page refresh: database %s (the dashboard pool's %d backends, from"
            + " /proc), dashboard server threads in this JVM %.1f ms (queries' client side, templates, HTTP); the"
            + " database's share: %s of one CPU during the burn-downs", sides[side].toSeconds(),
            dbCpu[side] < 0 ? "not readable" : Report.fmt("%.1f ms", dbCpu[side] / 1e6 / requests[side]), DASHBOARD_POOL,
            jvmCpu[side] / 1e6 / requests[side],
            dbCpu[side] < 0 ? "-" : Report.fmt("%.1f%%", 100 * dbCpu[side] / 1e9 / burnSeconds[side]));
      }
    }
    r.note("burn-down: %d rounds after an unmeasured %,d-job burn-down with the dashboard open at 1 s, each round"
        + " closed (C), open at 3 s (A), open at 1 s (B), in the order C A B, then B A C; the open dashboard polls %s"
        + " (GET with X-Pglock-Live: 1, one thread per page at a fixed rate from a random phase, skipping a tick"
        + " while the page's last refresh runs) from just before the workers start until the burn-down is done;"
        + " the queue %s in %s.job among the rows above", rounds, Math.min(jobs, WARM_UP_JOBS), POLLED, queue, schema);
    r.note("burn-down: %s", settings);
    for (String f : failures) {
      r.errors.add("dashboard refresh during the burn-down failed: " + f);
    }
  }

  /**
   * Part 2, steady: one long burn-down, cut into pairs of {@link #WINDOW} windows; in each pair a
   * coin decides which window has the dashboard open, and the pair's ratio is the open window's
   * jobs/s over the closed one's. Separate burn-downs vary by up to 1.7x here (the table, autovacuum,
   * the VM), far more than the 5% to resolve; the two windows of a pair share all of that, and the
   * random order keeps the burn-down's own drift (it slows as dead index entries pile up at the head
   * of the queue) out of the ratio. The figure is the median of the pairs' ratios. A burn-down runs
   * one to four minutes here, as fast as its queue's dead head and autovacuum let it: burn-downs of
   * fresh queues follow until there are {@link #MIN_PAIRS} pairs (the short run: one).
   */
  private static void windows(Db db, BenchOptions o, String schema, DashboardClient client, Report r)
      throws Exception {
    boolean shortRun = shortRun(o);
    int jobs = shortRun ? 20_000 : WINDOW_JOBS;
    int workers = o.b10Workers();
    List<double[]> pairs = new ArrayList<>(); // {open jobs/s, closed jobs/s}
    StringBuilder detail = new StringBuilder();
    java.util.Random coin = new java.util.Random();
    int burnDowns = 0;
    // a burn-down of this table runs at 2,500 to 15,000 jobs/s: as many as it takes for MIN_PAIRS
    while (burnDowns < (shortRun ? 1 : MAX_BURN_DOWNS) && pairs.size() < MIN_PAIRS) {
      burnDowns++;
      String queue = "b14w-" + ProcessHandle.current().pid() + "-" + burnDowns;
      PglockBurnDown c = new PglockBurnDown(db, workers, ClaimMode.ADVISORY, "b14w", queue,
          "pglock advisory, dashboard in turns", QueueInstrumentation.NONE, schema);
      System.out.printf("  steady burn-down %d of %,d jobs, pairs of %d-s windows, the dashboard open in one of"
          + " each: prepare ...", burnDowns, jobs, WINDOW.toSeconds());
      System.out.flush();
      java.util.concurrent.ExecutorService burner = java.util.concurrent.Executors.newSingleThreadExecutor();
      int before = pairs.size();
      try {
        c.prepare(jobs);
        java.util.concurrent.Future<BurnDownContender.BurnDown> done =
            burner.submit(() -> c.burnDown(Duration.ofSeconds(60)));
        while (c.handled() == 0 && !done.isDone()) {
          Thread.sleep(20); // the first pair starts with the first job
        }
        while (!done.isDone()) {
          boolean openFirst = coin.nextBoolean();
          double[] rate = new double[2];
          for (int w = 0; w < 2 && !done.isDone(); w++) {
            boolean open = (w == 0) == openFirst;
            long n0 = c.handled();
            long t0 = System.nanoTime();
            OpenDashboard d = open ? new OpenDashboard(client, POLLED, REFRESH).open() : null;
            long end = t0 + WINDOW.toNanos();
            while (!done.isDone() && System.nanoTime() < end) {
              Thread.sleep(20); // a window's clock, not a wait for a condition
            }
            if (d != null) {
              d.close();
            }
            rate[open ? 0 : 1] = (c.handled() - n0) / ((System.nanoTime() - t0) / 1e9);
          }
          if (!done.isDone()) { // not the tail, where the queue runs dry
            pairs.add(rate);
            detail.append(detail.length() == 0 ? "" : " ").append(openFirst
                ? Report.fmt("O%.0f/C%.0f", rate[0], rate[1]) : Report.fmt("C%.0f/O%.0f", rate[1], rate[0]));
          }
        }
        BurnDownContender.BurnDown result = done.get();
        System.out.printf(" %.1f s, %d pairs%n", result.done().toNanos() / 1e9, pairs.size() - before);
      } finally {
        burner.shutdownNow();
        c.close();
      }
      detail.append(" |");
    }
    double[] v = pairs.stream().mapToDouble(p -> p[0] / p[1]).sorted().toArray();
    String measure = Report.fmt("jobs/s, %d burn-down(s) of %,d no-op jobs, 1 worker x %d, the dashboard (%d pages,"
        + " refresh %d s) open in one %d-s window of each pair, at random", burnDowns, jobs, workers, POLLED.size(),
        REFRESH.toSeconds(), WINDOW.toSeconds());
    if (v.length == 0) { // the short run's burn-down is over within a pair
      r.info(measure, "-", "too short for a pair of windows", "-");
      return;
    }
    double median = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    double mean = Arrays.stream(v).average().orElse(Double.NaN);
    double sd = Math.sqrt(Arrays.stream(v).map(x -> (x - mean) * (x - mean)).sum() / Math.max(1, v.length - 1));
    r.atLeast(measure, "closed windows", Report.fmt("%d pairs", v.length), median, GOAL_THROUGHPUT);
    r.note("steady burn-downs: pairs (O open, C closed; jobs/s, in the order run, | between burn-downs): %s; ratio = median of the pairs'"
        + " open/closed (sorted: %s); mean %.3f, standard error of the mean %.3f", detail,
        Arrays.toString(Arrays.stream(v).mapToObj(x -> Report.fmt("%.2f", x)).toArray()), mean,
        sd / Math.sqrt(v.length));
  }

  /** A burn-down with the dashboard open (polled) while it runs, or closed. */
  private static final class Watched implements BurnDownContender {
    private final PglockBurnDown delegate;
    private final DashboardClient client;
    private final Duration refresh;
    OpenDashboard dashboard;

    Watched(PglockBurnDown delegate, DashboardClient client, Duration refresh) {
      this.delegate = delegate;
      this.client = client;
      this.refresh = refresh;
    }

    @Override
    public String name() {
      return delegate.name() + (refresh == null ? "" : ", refresh " + refresh.toSeconds() + " s");
    }

    @Override
    public boolean peer() {
      return false;
    }

    @Override
    public String settings() {
      return delegate.settings();
    }

    @Override
    public void prepare(int jobs) throws Exception {
      delegate.prepare(jobs);
    }

    @Override
    public BurnDown burnDown(Duration stall) throws Exception {
      if (refresh != null) {
        dashboard = new OpenDashboard(client, POLLED, refresh).open();
      }
      try {
        return delegate.burnDown(stall);
      } finally {
        if (dashboard != null) {
          dashboard.close();
        }
      }
    }

    @Override
    public List<String> tables() {
      return delegate.tables();
    }

    @Override
    public void close() throws Exception {
      delegate.close();
    }
  }
}
