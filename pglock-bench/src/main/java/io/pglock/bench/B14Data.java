package io.pglock.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * B14's tables: a pglock schema of the run's own filled with {@code generate_series}, in a mix like a
 * service's after a week. Ids follow enqueue times (a week ago to now); states are spread over the ids.
 *
 * <ul>
 *   <li>{@code job}: six queues of very different sizes (emails 40%, billing, webhooks 20% each, reports
 *       14.5%, exports 5%, audit 0.5%), two kinds each (ten kinds in all), payload
 *       {@code {"customer": <0..49,999>, "order": <id>}}; per 1,000 jobs: 50 available (a fifth of them
 *       scheduled up to two days ahead; priorities 0, 0, 5, 10), 5 retryable (due within 10 minutes, one
 *       error each), 3 discarded and 2 cancelled (finished, one error each), the rest succeeded (1 in 50
 *       after a failed attempt, with its error), finished a second after their enqueue, so over the whole
 *       week and about N/168 in the last hour; 20 running among the newest 40.</li>
 *   <li>{@code lock_history}: holds over the week in three namespaces, 30% on three hot names
 *       (inventory, ledger, nightly-report), the rest on 5,000 names {@code order-<n>}; 2% failed (with
 *       an error and a stack), 1% lost, 1% disconnected, the rest released.</li>
 *   <li>{@code scheduled_task}: 20 tasks of every minute (task-3 late, task-5 failing, task-7 paused),
 *       and {@code task_run}: one run a minute for each, history/20 runs per task, 3% failed.</li>
 *   <li>{@code dashboard_action}: 2,000 actions over the last week.</li>
 * </ul>
 */
final class B14Data {
  private B14Data() {}

  /** The job table's queues, largest first. */
  static final String[] QUEUES = {"emails", "billing", "webhooks", "reports", "exports", "audit"};

  private static final String JOBS = """
      INSERT INTO {s}.job (id, queue, kind, payload, priority, run_at, state, attempt, max_attempts, owner, node,
                           errors, created_at, started_at, finished_at)
      SELECT g.i, q.queue, q.kinds[1 + (g.i / 3) % 2],
             jsonb_build_object('customer', (g.i * 7919) % 50000, 'order', g.i),
             CASE WHEN st = 'available' THEN (ARRAY[0, 0, 5, 10])[1 + (g.i / 3) % 4] ELSE 0 END,
             CASE WHEN st = 'available' AND g.b % 5 = 0 THEN now() + (g.i % 2880) * interval '1 minute'
                  WHEN st = 'retryable' THEN now() + (g.i % 600) * interval '1 second'
                  ELSE g.created END,
             st,
             CASE st WHEN 'available' THEN 0 WHEN 'running' THEN 1 WHEN 'retryable' THEN 1 + g.i % 3
                     WHEN 'succeeded' THEN 1 + (g.i % 50 = 0)::int WHEN 'discarded' THEN 5 ELSE 1 END,
             CASE WHEN g.i % 10 = 0 THEN 10 END,
             CASE WHEN st = 'running' THEN 1000 + g.i % 4 END,
             CASE WHEN st <> 'available' THEN 'node-' || (g.i % 6) END,
             CASE WHEN st IN ('retryable', 'discarded', 'cancelled') OR (st = 'succeeded' AND g.i % 50 = 0)
                  THEN jsonb_build_array(jsonb_build_object('attempt', 1, 'at', g.created + interval '2 seconds',
                         'node', 'node-' || (g.i % 6), 'class', (ARRAY['java.net.SocketTimeoutException',
                         'java.lang.IllegalStateException', 'io.pglock.queue.WorkerLost'])[1 + g.i % 3],
                         'message', 'customer ' || ((g.i * 7919) % 50000) || ': '
                         || (ARRAY['read timed out', 'order is locked', 'worker lost'])[1 + g.i % 3],
                         'stack', 'java.lang.IllegalStateException: order is locked' || chr(10)
                         || repeat(chr(9) || 'at com.example.Orders.ship(Orders.java:42)' || chr(10), 12)))
                  ELSE '[]'::jsonb END,
             g.created,
             CASE WHEN st <> 'available' THEN g.created + interval '1 second' END,
             CASE WHEN st IN ('succeeded', 'discarded', 'cancelled')
                  THEN g.created + interval '1 second' + (g.i % 900) * interval '1 millisecond' END
        FROM (SELECT i, (i * 7) % 1000 AS b, now() - interval '7 days' * (1 - i::float8 / {n}) AS created
                FROM generate_series(1::bigint, {n}) i) g
        CROSS JOIN LATERAL (SELECT CASE WHEN g.i > {n} - 40 AND g.i % 2 = 0 THEN 'running'
                                        WHEN g.b < 50 THEN 'available'
                                        WHEN g.b < 55 THEN 'retryable'
                                        WHEN g.b < 58 THEN 'discarded'
                                        WHEN g.b < 60 THEN 'cancelled'
                                        ELSE 'succeeded' END AS st) s
        CROSS JOIN LATERAL (SELECT CASE WHEN g.i / 11 % 200 < 80 THEN 'emails'
                                        WHEN g.i / 11 % 200 < 120 THEN 'billing'
                                        WHEN g.i / 11 % 200 < 160 THEN 'webhooks'
                                        WHEN g.i / 11 % 200 < 189 THEN 'reports'
                                        WHEN g.i / 11 % 200 < 199 THEN 'exports'
                                        ELSE 'audit' END AS queue) q0
        CROSS JOIN LATERAL (SELECT q0.queue, CASE q0.queue
                                    WHEN 'emails' THEN ARRAY['email.welcome', 'email.receipt']
                                    WHEN 'billing' THEN ARRAY['invoice.create', 'payment.capture']
                                    WHEN 'webhooks' THEN ARRAY['webhook.deliver', 'webhook.verify']
                                    WHEN 'reports' THEN ARRAY['report.daily', 'report.monthly']
                                    WHEN 'exports' THEN ARRAY['export.csv', 'export.pdf']
                                    ELSE ARRAY['audit.record', 'audit.verify'] END AS kinds) q
      """;

  private static final String HISTORY = """
      INSERT INTO {s}.lock_history (id, namespace, name, key, node, pid, backend_start, acquired_at, released_at,
                                    outcome, loss_cause, error_class, error_message, error_stack)
      SELECT i, ns, nm, {s}.key(ns, nm), 'node-' || (i % 6), 10000 + i % 500, now() - interval '8 days', acq,
             acq + (i % 2000) * interval '1 millisecond',
             CASE WHEN o < 2 THEN 'failed' WHEN o < 3 THEN 'lost' WHEN o < 4 THEN 'disconnected' ELSE 'released' END,
             CASE WHEN o = 2 THEN (ARRAY['CONNECTION_LOST', 'LEASE_EXPIRED'])[1 + i % 2] END,
             CASE WHEN o < 2 THEN 'java.lang.IllegalStateException' END,
             CASE WHEN o < 2 THEN 'ledger for ' || nm || ' is unbalanced' END,
             CASE WHEN o < 2 THEN 'java.lang.IllegalStateException: ledger is unbalanced' || chr(10)
                                  || repeat(chr(9) || 'at com.example.Ledger.check(Ledger.java:7)' || chr(10), 10) END
        FROM (SELECT i, (i * 13) % 100 AS o, now() - interval '7 days' * (1 - i::float8 / {h}) AS acq,
                     (ARRAY['shop', 'shop', 'billing', 'infra'])[1 + i % 4] AS ns,
                     CASE WHEN i % 10 < 3 THEN (ARRAY['inventory', 'ledger', 'nightly-report'])[1 + i % 3]
                          ELSE 'order-' || ((i * 31) % 5000) END AS nm
                FROM generate_series(1, {h}) i) g
      """;

  private static final String TASKS = """
      INSERT INTO {s}.scheduled_task (namespace, name, schedule, paused, next_slot, updated_by)
      SELECT (ARRAY['shop', 'billing'])[1 + t % 2], 'task-' || t, 'every 1 min', t = 7,
             CASE WHEN t = 3 THEN now() - interval '1 hour' ELSE date_trunc('minute', now()) + interval '1 minute' END,
             CASE WHEN t = 7 THEN 'ops' END
        FROM generate_series(1, 20) t
      """;

  private static final String RUNS = """
      INSERT INTO {s}.task_run (namespace, task, slot, kind, state, attempt, node, fencing_token, started_at,
                                finished_at, error_class, error_message, error_stack)
      SELECT (ARRAY['shop', 'billing'])[1 + t % 2], 'task-' || t, slot, 'scheduled',
             CASE WHEN bad THEN 'failed' ELSE 'succeeded' END, 1, 'node-' || (k % 6), k * 20 + t,
             slot + (k % 40) * interval '1 millisecond', slot + (k % 40 + 200) * interval '1 millisecond',
             CASE WHEN bad THEN 'java.io.IOException' END, CASE WHEN bad THEN 'report server said 502' END,
             CASE WHEN bad THEN 'java.io.IOException: report server said 502' END
        FROM generate_series(1, 20) t, generate_series(1, {h} / 20) k,
             LATERAL (SELECT date_trunc('minute', now()) - k * interval '1 minute' AS slot,
                             t = 5 AND k < 3 OR (k * 17 + t) % 33 = 0 AS bad) s
      """;

  private static final String ACTIONS = """
      INSERT INTO {s}.dashboard_action (at, actor, action, target, outcome, affected, detail)
      SELECT now() - (2000 - a) * interval '5 minutes', (ARRAY['alice', 'bob', 'anonymous'])[1 + a % 3],
             (ARRAY['job.retry', 'job.discard', 'task.pause', 'task.resume', 'job.delete'])[1 + a % 5],
             'job ' || (a * 491), CASE WHEN a % 17 = 0 THEN 'refused' ELSE 'done' END, 1,
             CASE WHEN a % 17 = 0 THEN 'not allowed' END
        FROM generate_series(1, 2000) a
      """;

  /**
   * Fills a migrated, empty schema, then VACUUM ANALYZE (as autovacuum would have, on a table that grew
   * over a week: the planner's statistics and the visibility map).
   *
   * @return seconds per step, for the notes
   */
  static Map<String, Double> fill(Connection c, String schema, int jobs, int history) throws SQLException {
    Map<String, Double> took = new LinkedHashMap<>();
    try (Statement s = c.createStatement()) {
      step(s, took, "jobs", sql(JOBS, schema, jobs, history));
      s.execute("SELECT setval(pg_get_serial_sequence('" + schema + ".job', 'id'), " + jobs + ")");
      step(s, took, "history", sql(HISTORY, schema, jobs, history));
      step(s, took, "tasks", sql(TASKS, schema, jobs, history) + ";" + sql(RUNS, schema, jobs, history));
      step(s, took, "actions", sql(ACTIONS, schema, jobs, history));
      for (String t : new String[] {"job", "lock_history", "scheduled_task", "task_run", "dashboard_action"}) {
        step(s, took, "vacuum analyze", "VACUUM (ANALYZE) " + schema + "." + t);
      }
    }
    return took;
  }

  private static void step(Statement s, Map<String, Double> took, String name, String sql) throws SQLException {
    long t0 = System.nanoTime();
    s.execute(sql);
    took.merge(name, (System.nanoTime() - t0) / 1e9, Double::sum);
  }

  private static String sql(String template, String schema, int jobs, int history) {
    return template.replace("{s}", schema).replace("{n}", Integer.toString(jobs))
        .replace("{h}", Integer.toString(history));
  }

  /** {@return one long from a query} */
  static long one(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** {@return rows per state and the table's size, one line} */
  static String describe(Connection c, String schema) throws SQLException {
    StringBuilder b = new StringBuilder();
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT state, count(*) FROM " + schema
        + ".job GROUP BY 1 ORDER BY 2 DESC")) {
      while (rs.next()) {
        b.append(b.length() == 0 ? "" : ", ").append(rs.getString(1)).append(' ')
            .append(Report.fmt("%,d", rs.getLong(2)));
      }
    }
    b.append(Report.fmt("; job table %s (heap, indexes, TOAST)", TableStats.mib(one(c,
        "SELECT pg_total_relation_size('" + schema + ".job')"))));
    b.append(Report.fmt("; %,d finished in the last hour", one(c, "SELECT count(*) FROM " + schema
        + ".job WHERE state IN ('succeeded', 'discarded', 'cancelled') AND finished_at > now() - interval '1 hour'")));
    return b.toString();
  }
}
