package io.pglock.dashboard.internal.data;

import io.pglock.dashboard.internal.view.Chart;
import io.pglock.dashboard.internal.view.Count;
import io.pglock.dashboard.internal.view.Format;
import io.pglock.queue.JobState;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Queues and jobs, by queries that stay fast on a table of millions: counts stop at
 * {@link #COUNT_CAP} (waiting jobs: {@link #WAITING_SCAN} per queue) and then show the planner's
 * estimate, lists walk an index in keyset order and examine at most {@link #SCAN} rows per page, and
 * the throughput charts read at most {@link #CHART_ROWS} finished jobs in all. What every queue of a
 * page needs (finished counts, charts) is read in one pass per request, not one per queue.
 */
public final class JobsData {
  /** Counts are exact below this; above it, the planner's estimate is shown. */
  public static final int COUNT_CAP = 10_000;
  /**
   * The most waiting jobs (available and retryable) one queue's counts examine: below it the due,
   * scheduled and retryable counts are exact, above it estimates.
   */
  public static final int WAITING_SCAN = 1_000;
  /** The most rows one page of jobs examines for filters no index serves (kind, times, payload). */
  public static final int SCAN = 5_000;
  /** Jobs per page. */
  public static final int PAGE = 50;
  /** The most finished jobs the throughput chart reads. */
  public static final int CHART_ROWS = 50_000;
  /** Minutes the throughput chart covers. */
  public static final int CHART_MINUTES = 60;
  private static final Pattern PLAN_ROWS = Pattern.compile("\"Plan Rows\":\\s*([0-9.eE+]+)");
  private static final String FINISHED = "('succeeded', 'discarded', 'cancelled')";
  private static final String COLUMNS = "id, queue, kind, state, attempt, max_attempts, priority, run_at, created_at,"
      + " started_at, finished_at, node, left(payload::text, 200) AS payload, errors->-1->>'class' AS error_class,"
      + " errors->-1->>'message' AS error_message";

  private JobsData() {}

  /**
   * One queue's figures.
   *
   * @param queue its name
   * @param due available jobs whose time has come
   * @param scheduled available jobs due later
   * @param retryable jobs waiting for a retry
   * @param running jobs running
   * @param succeeded succeeded jobs kept (an estimate above the cap)
   * @param discarded discarded jobs kept
   * @param cancelled cancelled jobs kept
   * @param oldestDue how long the oldest due job has waited, or null
   */
  public record QueueStats(String queue, Count due, Count scheduled, Count retryable, Count running, Count succeeded,
      Count discarded, Count cancelled, Duration oldestDue) {}

  /**
   * One job in a list.
   *
   * @param id its id
   * @param queue its queue
   * @param kind its kind
   * @param state its state
   * @param attempt attempts started
   * @param maxAttempts its own limit, or null
   * @param priority its priority
   * @param runAt not before
   * @param createdAt enqueued at
   * @param startedAt last attempt's start, or null
   * @param finishedAt finished at, or null
   * @param node the node of the last attempt, or null
   * @param payload the payload's first 200 characters
   * @param errorClass the last error's class, or null
   * @param errorMessage the last error's message, or null
   * @param cursor the keyset position after this row
   */
  public record JobRow(long id, String queue, String kind, String state, int attempt, Integer maxAttempts,
      int priority, Instant runAt, Instant createdAt, Instant startedAt, Instant finishedAt, String node,
      String payload, String errorClass, String errorMessage, String cursor) {}

  /**
   * A page of jobs.
   *
   * @param rows the jobs, at most {@link #PAGE}
   * @param next the cursor of the next page, or null at the end
   * @param scanned true if the page stopped at the scan bound before filling: the filter matched few
   *     of the rows examined, and the next page goes on from there
   */
  public record JobsPage(List<JobRow> rows, String next, boolean scanned) {}

  /**
   * {@return the queues that have jobs waiting or running, or finished in the last hour, sorted}
   *
   * <p>Finished in the last hour: among the jobs the page's charts read ({@link #CHART_ROWS}), or, on a
   * page without charts (the jobs page's queue list), among the newest {@link #COUNT_CAP}.
   */
  public static List<String> queues(Db db) throws SQLException {
    TreeSet<String> queues = new TreeSet<>(db.shared("queues", SharedReads.QUEUES_TTL, () -> {
      List<String> found = new ArrayList<>();
      // A skip scan of each partial index: one index probe per distinct queue, whatever the rows.
      for (String states : List.of("state IN ('available', 'retryable')", "state = 'running'")) {
        found.addAll(db.list("WITH RECURSIVE q(queue, n) AS ("
            + " SELECT min(queue), 1 FROM {s}.job WHERE " + states
            + " UNION ALL SELECT (SELECT min(queue) FROM {s}.job WHERE " + states + " AND queue > q.queue), n + 1"
            + " FROM q WHERE q.queue IS NOT NULL AND n < 200)"
            + " SELECT queue FROM q WHERE queue IS NOT NULL", ps -> {}, rs -> rs.getString(1)));
      }
      return List.copyOf(found);
    }));
    if (db.memoized("recent")) {
      queues.addAll(recent(db).byQueue().keySet());
    } else {
      queues.addAll(db.list("SELECT DISTINCT queue FROM (SELECT queue FROM {s}.job WHERE state IN " + FINISHED
          + " AND finished_at > now() - interval '1 hour' ORDER BY finished_at DESC LIMIT " + COUNT_CAP + ") j",
          ps -> {}, rs -> rs.getString(1)));
    }
    return List.copyOf(queues);
  }

  /**
   * {@return a queue's counts and the age of its oldest due job}
   *
   * <p>Waiting jobs in one pass over the queue's rows of index job_available, at most
   * {@link #WAITING_SCAN} (a state the index cannot tell apart, retryable, no longer costs a walk of
   * every waiting job); finished jobs from one pass for every queue ({@link #finished(Db)}).
   */
  public static QueueStats stats(Db db, String queue) throws SQLException {
    return db.shared("stats:" + queue, SharedReads.LIVE_TTL, () -> readStats(db, queue));
  }

  private static QueueStats readStats(Db db, String queue) throws SQLException {
    long[] w = db.one("SELECT count(*) FILTER (WHERE state = 'available' AND run_at <= now()),"
        + " count(*) FILTER (WHERE state = 'available' AND run_at > now()), count(*) FILTER (WHERE state = 'retryable'),"
        + " count(*), (SELECT count(*) FROM (SELECT 1 FROM {s}.job WHERE queue = ? AND state = 'running'"
        + "   LIMIT " + COUNT_CAP + ") r)"
        + " FROM (SELECT state, run_at FROM {s}.job WHERE queue = ? AND state IN ('available', 'retryable')"
        + "   LIMIT " + WAITING_SCAN + ") x", ps -> {
          ps.setString(1, queue);
          ps.setString(2, queue);
        }, rs -> new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)}).orElseThrow();
    boolean allSeen = w[3] < WAITING_SCAN;
    Finished f = finished(db);
    return new QueueStats(queue,
        seen(db, allSeen, w[0], queue, "state = 'available' AND run_at <= now()"),
        seen(db, allSeen, w[1], queue, "state = 'available' AND run_at > now()"),
        seen(db, allSeen, w[2], queue, "state = 'retryable'"),
        capped(db, w[4], queue, "state = 'running'"),
        f.count(db, queue, "succeeded"), f.count(db, queue, "discarded"), f.count(db, queue, "cancelled"),
        oldestDue(db, queue));
  }

  private static Count capped(Db db, long exact, String queue, String where) throws SQLException {
    return exact < COUNT_CAP ? new Count(exact, false) : new Count(Math.max(COUNT_CAP, estimate(db, queue, where)), true);
  }

  /** A count from a pass that saw every row it counts ({@code allSeen}), or else at least what it saw. */
  private static Count seen(Db db, boolean allSeen, long seen, String queue, String where) throws SQLException {
    return allSeen ? new Count(seen, false) : new Count(Math.max(seen, estimate(db, queue, where)), true);
  }

  /**
   * Finished jobs per queue and state, read once per request for every queue: the newest
   * {@link #COUNT_CAP} finished jobs (index job_finished) and the newest {@link #COUNT_CAP} discarded
   * and cancelled ones (the partial index job_failed). A count is exact when its pass saw every row
   * of its states (the table has fewer than the cap), else the planner's estimate, at least the rows
   * seen: the table has no index by queue for finished jobs, so an exact count of a small queue's
   * succeeded jobs among millions would read them all.
   */
  private static Finished finished(Db db) throws SQLException {
    return db.shared("finished", () -> {
      Map<String, Long> counts = new HashMap<>();
      long[] seen = {0, 0};
      db.list("SELECT queue, state, count(*) FROM (SELECT queue, state FROM {s}.job WHERE state IN " + FINISHED
          + " ORDER BY finished_at DESC LIMIT " + COUNT_CAP + ") j GROUP BY 1, 2", ps -> {}, rs -> {
            if (rs.getString(2).equals("succeeded")) {
              counts.put(rs.getString(1) + "\u0000succeeded", rs.getLong(3));
            }
            seen[0] += rs.getLong(3);
            return null;
          });
      db.list("SELECT queue, state, count(*) FROM (SELECT queue, state FROM {s}.job WHERE state IN ('discarded',"
          + " 'cancelled') ORDER BY finished_at DESC, id DESC LIMIT " + COUNT_CAP + ") j GROUP BY 1, 2", ps -> {}, rs -> {
            counts.put(rs.getString(1) + "\u0000" + rs.getString(2), rs.getLong(3));
            seen[1] += rs.getLong(3);
            return null;
          });
      return new Finished(Map.copyOf(counts), seen[0] < COUNT_CAP, seen[1] < COUNT_CAP);
    });
  }

  /** What {@link #finished(Db)} read: counts by queue and state, and whether each pass saw every row. */
  private record Finished(Map<String, Long> counts, boolean allSucceeded, boolean allFailed) {
    Count count(Db db, String queue, String state) throws SQLException {
      long seen = counts.getOrDefault(queue + "\u0000" + state, 0L);
      return seen(db, state.equals("succeeded") ? allSucceeded : allFailed, seen, queue, "state = '" + state + "'");
    }
  }

  /** The planner's row estimate for a condition on one queue (EXPLAIN reads statistics, not rows). */
  private static long estimate(Db db, String queue, String where) throws SQLException {
    String plan = db.one("EXPLAIN (FORMAT JSON) SELECT 1 FROM {s}.job WHERE queue = ? AND " + where,
        ps -> ps.setString(1, queue), rs -> rs.getString(1)).orElse("");
    Matcher m = PLAN_ROWS.matcher(plan);
    return m.find() ? (long) Double.parseDouble(m.group(1)) : 0;
  }

  /**
   * The oldest due job's wait: per priority (a skip scan, at most 50), the first {@code run_at} in
   * the index job_available's order, so the answer costs a few index probes whatever the backlog.
   */
  private static Duration oldestDue(Db db, String queue) throws SQLException {
    return db.one("WITH RECURSIVE p(priority, n) AS ("
        + " SELECT max(priority), 1 FROM {s}.job WHERE queue = ? AND state IN ('available', 'retryable')"
        + " UNION ALL SELECT (SELECT max(priority) FROM {s}.job WHERE queue = ? AND state IN ('available', 'retryable')"
        + "   AND priority < p.priority), n + 1 FROM p WHERE p.priority IS NOT NULL AND n < 50)"
        + " SELECT extract(epoch FROM now() - min(o.run_at)) * 1000 AS age FROM p CROSS JOIN LATERAL"
        + " (SELECT run_at FROM {s}.job WHERE queue = ? AND state IN ('available', 'retryable')"
        + "   AND priority = p.priority ORDER BY run_at LIMIT 1) o WHERE p.priority IS NOT NULL AND o.run_at <= now()",
        ps -> {
          ps.setString(1, queue);
          ps.setString(2, queue);
          ps.setString(3, queue);
        }, rs -> Db.millis(rs, "age")).orElse(null);
  }

  /**
   * The newest finished jobs of the last hour, at most {@link #CHART_ROWS} of all queues, counted per
   * queue, state and minute: one pass (index job_finished), read once per request, that serves the
   * queue list and every throughput chart of the page.
   *
   * @param byQueue per queue, the counts per series (succeeded, discarded, cancelled) and minute
   * @param all the same for every queue
   * @param read the jobs read
   */
  private record Recent(Map<String, long[][]> byQueue, long[][] all, long read) {}

  private static Recent recent(Db db) throws SQLException {
    return db.shared("recent", () -> {
      Map<String, long[][]> byQueue = new TreeMap<>();
      long[][] all = new long[3][CHART_MINUTES];
      long[] read = {0};
      db.list("SELECT queue, state, floor(extract(epoch FROM now() - finished_at) / 60)::int AS ago, count(*)"
          + " FROM (SELECT queue, state, finished_at FROM {s}.job WHERE state IN " + FINISHED
          + "   AND finished_at > now() - interval '" + CHART_MINUTES + " minutes'"
          + "   ORDER BY finished_at DESC LIMIT " + CHART_ROWS + ") j"
          + " GROUP BY 1, 2, 3", ps -> {}, rs -> {
            int ago = Math.min(CHART_MINUTES - 1, Math.max(0, rs.getInt("ago")));
            int series = switch (rs.getString("state")) {
              case "succeeded" -> 0;
              case "discarded" -> 1;
              default -> 2;
            };
            long n = rs.getLong(4);
            byQueue.computeIfAbsent(rs.getString("queue"), k -> new long[3][CHART_MINUTES])[series][CHART_MINUTES - 1 - ago]
                += n;
            all[series][CHART_MINUTES - 1 - ago] += n;
            read[0] += n;
            return null;
          });
      return new Recent(byQueue, all, read[0]);
    });
  }

  /**
   * {@return jobs finished per minute over the last hour (succeeded and discarded stacked), from at
   * most {@link #CHART_ROWS} of the newest finished jobs of all queues}
   *
   * @param queue one queue, or null for all
   */
  public static Chart throughput(Db db, String queue) throws SQLException {
    Recent recent = recent(db);
    long[][] values = queue == null ? recent.all() : recent.byQueue().get(queue);
    long read = 0;
    if (values != null) {
      for (long[] series : values) {
        for (long v : series) {
          read += v;
        }
      }
    }
    if (read == 0) {
      return new Chart("Jobs finished per minute, last hour", List.of(), 240, Chart.HEIGHT, 0, "", "", "");
    }
    List<String> labels = new ArrayList<>();
    for (int i = 0; i < CHART_MINUTES; i++) {
      labels.add((CHART_MINUTES - i) + " min ago");
    }
    String note = recent.read() >= CHART_ROWS
        ? "more than " + Format.compact(CHART_ROWS) + " jobs finished in the hour (all queues): the charts show the"
            + " newest " + Format.compact(CHART_ROWS)
        : "";
    return Chart.stacked("Jobs finished per minute, last hour", labels, List.of("succeeded", "discarded", "cancelled"),
        values, "60 min ago", "now", note);
  }

  /**
   * {@return a page of jobs matching a filter, in the order of the index that serves its state}
   *
   * @param after the previous page's cursor, or null for the first page
   * @param limit rows per page
   */
  public static JobsPage list(Db db, JobFilter f, Cursor after, int limit) throws SQLException {
    Scan scan = Scan.of(f);
    String inner = scan.inner(COLUMNS);
    StringBuilder outer = new StringBuilder("SELECT * FROM (" + inner + ") j WHERE true");
    List<Object> args = new ArrayList<>(scan.args(f, after));
    if (!scan.queueInside && f.queue() != null) {
      outer.append(" AND queue = ?");
      args.add(f.queue());
    }
    if (scan.stateOutside && f.state() != null) {
      outer.append(" AND state = ?");
      args.add(f.state().dbValue());
    }
    if (f.kind() != null) {
      outer.append(" AND kind = ?");
      args.add(f.kind());
    }
    if (f.from() != null) {
      outer.append(" AND created_at >= ?");
      args.add(Timestamp.from(f.from()));
    }
    if (f.to() != null) {
      outer.append(" AND created_at < ?");
      args.add(Timestamp.from(f.to()));
    }
    if (f.payload() != null) {
      // The payload column of the inner rows is cut for display: match against the full one.
      outer.append(f.payloadIsJson()
          ? " AND EXISTS (SELECT 1 FROM {s}.job p WHERE p.id = j.id AND p.payload @> ?::jsonb)"
          : " AND EXISTS (SELECT 1 FROM {s}.job p WHERE p.id = j.id AND strpos(lower(p.payload::text), lower(?)) > 0)");
      args.add(f.payload());
    }
    outer.append(" LIMIT ").append(limit + 1);
    List<JobRow> rows = db.list(outer.toString(), ps -> bind(ps, args), rs -> new JobRow(rs.getLong("id"),
        rs.getString("queue"), rs.getString("kind"), rs.getString("state"), rs.getInt("attempt"),
        (Integer) rs.getObject("max_attempts"), rs.getInt("priority"), Db.instant(rs, "run_at"),
        Db.instant(rs, "created_at"), Db.instant(rs, "started_at"), Db.instant(rs, "finished_at"),
        rs.getString("node"), rs.getString("payload"), rs.getString("error_class"), rs.getString("error_message"),
        scan.cursor(Db.instant(rs, "finished_at"), rs.getLong("id"))));
    if (rows.size() > limit) {
      return new JobsPage(List.copyOf(rows.subList(0, limit)), rows.get(limit - 1).cursor(), false);
    }
    // Fewer than a page: either the index ran out, or the scan bound was reached with few matches.
    List<Object> innerArgs = scan.args(f, after);
    String last = db.one("SELECT count(*) AS n, " + scan.lastKey() + " FROM (" + inner + ") j",
        ps -> bind(ps, innerArgs), rs -> rs.getLong("n") < SCAN ? null
            : scan.cursor(Db.instant(rs, "last_time"), rs.getLong("last_id"))).orElse(null);
    return new JobsPage(List.copyOf(rows), last, last != null);
  }

  private static void bind(PreparedStatement ps, List<Object> args) throws SQLException {
    for (int i = 0; i < args.size(); i++) {
      ps.setObject(i + 1, args.get(i));
    }
  }

  /** How a state is listed: which index walks it, and whether the filter's queue and state go inside. */
  private record Scan(String where, String order, boolean timeKeyed, boolean queueInside, boolean stateOutside) {
    static Scan of(JobFilter f) {
      JobState s = f.state();
      if (s == null) {
        return new Scan("true", "id DESC", false, false, false);
      }
      return switch (s) {
        case SUCCEEDED -> new Scan("state IN " + FINISHED, "finished_at DESC, id DESC", true, false, true);
        case DISCARDED, CANCELLED ->
            new Scan("state IN ('discarded', 'cancelled')", "finished_at DESC, id DESC", true, false, true);
        default -> new Scan("state = ?", "id DESC", false, true, false);
      };
    }

    String inner(String columns) {
      String key = timeKeyed ? "(finished_at, id) < (?, ?)" : "id < ?";
      return "SELECT " + columns + " FROM {s}.job WHERE " + where + (queueInside ? " AND (?::text IS NULL OR queue = ?)" : "")
          + " AND " + key + " ORDER BY " + order + " LIMIT " + SCAN;
    }

    List<Object> args(JobFilter f, Cursor after) {
      List<Object> args = new ArrayList<>();
      if (where.contains("?")) {
        args.add(f.state().dbValue());
      }
      if (queueInside) {
        args.add(f.queue());
        args.add(f.queue());
      }
      if (timeKeyed) {
        args.add(after == null || after.time() == null ? Cursor.END_TIME : Timestamp.from(after.time()));
      }
      args.add(after == null ? Long.MAX_VALUE : after.id());
      return args;
    }

    String lastKey() {
      return timeKeyed
          ? "(array_agg(finished_at ORDER BY finished_at, id))[1] AS last_time, (array_agg(id ORDER BY finished_at, id))[1] AS last_id"
          : "NULL::timestamptz AS last_time, min(id) AS last_id";
    }

    String cursor(Instant finishedAt, long id) {
      return timeKeyed ? Cursor.of(finishedAt, id) : Cursor.of(null, id);
    }
  }

  /** {@return counts per queue for the overview, at most 50 queues} */
  public static Map<String, QueueStats> allStats(Db db) throws SQLException {
    recent(db); // the pages with counts show charts too: the queue list comes from the charts' pass
    Map<String, QueueStats> stats = new LinkedHashMap<>();
    for (String q : queues(db).stream().limit(50).toList()) {
      stats.put(q, stats(db, q));
    }
    return stats;
  }

  /** {@return one job with every failed attempt's error, if it exists} */
  public static java.util.Optional<io.pglock.queue.Job> job(Db db, long id) throws SQLException {
    List<io.pglock.queue.JobError> errors = db.list("SELECT (e->>'attempt')::int AS attempt,"
        + " (e->>'at')::timestamptz AS at, e->>'node' AS node, e->>'class' AS class, e->>'message' AS message,"
        + " e->>'stack' AS stack FROM {s}.job, jsonb_array_elements(errors) e WHERE id = ?", ps -> ps.setLong(1, id),
        rs -> new io.pglock.queue.JobError(rs.getInt("attempt"), Db.instant(rs, "at"), rs.getString("node"),
            rs.getString("class"), rs.getString("message"), rs.getString("stack")));
    return db.one("SELECT id, queue, kind, jsonb_pretty(payload) AS payload, priority, run_at, state, attempt,"
        + " max_attempts, unique_key, concurrency_key, node, cancel_requested_at IS NOT NULL AS cancel_requested,"
        + " created_at, started_at, finished_at FROM {s}.job WHERE id = ?", ps -> ps.setLong(1, id),
        rs -> new io.pglock.queue.Job(rs.getLong("id"), rs.getString("queue"), rs.getString("kind"),
            rs.getString("payload"), rs.getInt("priority"), Db.instant(rs, "run_at"),
            JobState.ofDb(rs.getString("state")), rs.getInt("attempt"), (Integer) rs.getObject("max_attempts"),
            rs.getString("unique_key"), rs.getString("concurrency_key"), rs.getString("node"),
            rs.getBoolean("cancel_requested"), List.copyOf(errors), Db.instant(rs, "created_at"),
            Db.instant(rs, "started_at"), Db.instant(rs, "finished_at")));
  }
}
