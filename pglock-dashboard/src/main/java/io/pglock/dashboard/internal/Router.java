package io.pglock.dashboard.internal;

import io.pglock.dashboard.DashboardAction;
import io.pglock.dashboard.internal.data.ActionLog;
import io.pglock.dashboard.internal.data.Cursor;
import io.pglock.dashboard.internal.data.Db;
import io.pglock.dashboard.internal.data.ElectionsData;
import io.pglock.dashboard.internal.data.JobFilter;
import io.pglock.dashboard.internal.data.JobsData;
import io.pglock.dashboard.internal.data.LocksData;
import io.pglock.dashboard.internal.data.NodesData;
import io.pglock.dashboard.internal.data.SharedReads;
import io.pglock.dashboard.internal.data.TasksData;
import io.pglock.dashboard.internal.http.Exchange;
import io.pglock.dashboard.internal.http.Params;
import io.pglock.dashboard.internal.view.Chart;
import io.pglock.dashboard.internal.view.Page;
import io.pglock.queue.Job;
import io.pglock.queue.JobState;
import java.io.IOException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Routes a request to its page or action, and turns failures into pages that say what went wrong. */
public final class Router {
  private static final Logger log = LoggerFactory.getLogger(Router.class);
  private final Settings settings;
  private final Csrf csrf;
  private final Templates templates = new Templates();
  private final SharedReads shared = new SharedReads();
  private final Actions actions;

  /** A router for a dashboard's settings. */
  public Router(Settings settings) {
    this.settings = settings;
    this.csrf = new Csrf(settings.csrfSecret());
    this.actions = new Actions(settings);
  }

  /** Answers one exchange; never throws but for a client that went away. */
  public void handle(Exchange ex) throws IOException {
    String cookie = Csrf.cookie(ex).orElse(null);
    boolean newCookie = cookie == null;
    if (newCookie) {
      cookie = Csrf.newCookieValue();
    }
    Page page = page(ex, cookie);
    Response r;
    try {
      r = route(ex, page);
    } catch (IllegalArgumentException e) {
      r = error(page, 400, "That request cannot be answered", e.getMessage());
    } catch (SQLException e) {
      log.warn("dashboard: {} {}: the database failed: {}", ex.method(), ex.path(), e.toString());
      r = error(page, 503, "The database did not answer", e.getMessage() + " (SQLState " + e.getSQLState() + ")");
    } catch (RuntimeException e) {
      log.error("dashboard: {} {} failed", ex.method(), ex.path(), e);
      r = error(page, 500, "The dashboard failed", e.toString());
    }
    if (newCookie) {
      r = r.with("Set-Cookie", Csrf.setCookie(cookie, ex.basePath(), ex.secure()));
    }
    ex.respond(r.status(), r.headers(), r.body());
  }

  private Page page(Exchange ex, String cookie) {
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put(Csrf.FIELD, csrf.token(cookie));
    fields.putAll(ex.extraFormFields());
    Set<DashboardAction> allowed = EnumSet.noneOf(DashboardAction.class);
    if (!settings.readOnly()) {
      for (DashboardAction a : DashboardAction.values()) {
        if (actions.allows(ex.caller(), a)) {
          allowed.add(a);
        }
      }
    }
    return new Page("pglock", "", ex.basePath(), Map.copyOf(fields), settings.readOnly(), Set.copyOf(allowed),
        Actions.flash(ex.query()), (int) settings.refresh().toMillis(), ex.caller().recordedName());
  }

  private Response route(Exchange ex, Page page) throws SQLException, IOException {
    String path = ex.path();
    if (path.startsWith("/assets/")) {
      return Assets.get(path.substring("/assets/".length())).orElseGet(() -> notFound(page));
    }
    if (ex.method().equals("POST")) {
      Actions.Outcome o = actions.post(ex, csrf);
      return o.location() != null ? Response.redirect(o.location()) : error(page, o.status(), o.title(), o.message());
    }
    if (!ex.method().equals("GET") && !ex.method().equals("HEAD")) {
      return error(page, 405, "Method not allowed", "pages answer GET; actions are POSTed by the pages' forms")
          .with("Allow", "GET, HEAD, POST");
    }
    Params q = ex.query();
    try (Db db = Db.open(settings.dataSource(), settings.schema(), settings.queryTimeout(), shared)) {
      switch (path) {
        case "", "/" -> {
          List<JobsData.QueueStats> queues = new ArrayList<>(JobsData.allStats(db).values());
          List<TasksData.Task> troubled = TasksData.tasks(db, null).stream().filter(t -> t.late() || t.failing())
              .toList();
          return render(page.titled("Overview", "overview"), "overview.jte", new Views.Overview(
              NodesData.nodes(db), ElectionsData.read(db, null).elections(), queues, JobsData.throughput(db, null),
              troubled, LocksData.recentLosses(db), ActionLog.entries(db, null, 10)));
        }
        case "/locks" -> {
          String ns = q.get("namespace").orElse(null);
          String name = q.get("name").orElse(null);
          List<LocksData.LockRow> locks = LocksData.locks(db, ns, name);
          return render(page.titled("Locks", "locks"), "locks.jte", new Views.Locks(locks, blank(ns), blank(name),
              locks.size() >= LocksData.MAX_LOCKS));
        }
        case "/history" -> {
          boolean failed = q.get("failed").isPresent();
          String ns = q.get("namespace").orElse(null);
          String name = q.get("name").orElse(null);
          if (name != null && ns == null) {
            throw new IllegalArgumentException("a lock name needs its namespace: fill in both, or neither");
          }
          LocksData.HistoryPage history = LocksData.history(db, failed, ns, name, Cursor.parse(q.get("after"))
              .orElse(null), LocksData.HISTORY_PAGE);
          return render(page.titled("Lock history", "history"), "history.jte", new Views.History(history.rows(),
              failed, blank(ns), blank(name), history.next()));
        }
        case "/elections" -> {
          return render(page.titled("Elections and ownership", "elections"), "elections.jte",
              ElectionsData.read(db, q.get("namespace").orElse(null)));
        }
        case "/tasks" -> {
          String ns = q.get("namespace").orElse(null);
          return render(page.titled("Tasks", "tasks"), "tasks.jte", new Views.Tasks(TasksData.tasks(db, ns), blank(ns)));
        }
        case "/task" -> {
          String ns = required(q, "namespace");
          String name = required(q, "name");
          TasksData.Task task = TasksData.task(db, ns, name);
          if (task == null) {
            return error(page, 404, "No such task", "no task " + name + " in namespace " + ns);
          }
          List<TasksData.Run> runs = TasksData.runs(db, ns, name, Cursor.parse(q.get("after")).orElse(null),
              TasksData.RUNS_PAGE + 1);
          List<TasksData.Run> shown = runs.subList(0, Math.min(runs.size(), TasksData.RUNS_PAGE));
          String next = runs.size() > TasksData.RUNS_PAGE ? shown.get(shown.size() - 1).cursor() : null;
          Chart chart = TasksData.lateness(TasksData.runs(db, ns, name, null, 60));
          return render(page.titled("Task " + name, "tasks"), "task.jte", new Views.TaskPage(task, shown, chart, next));
        }
        case "/queues" -> {
          List<JobsData.QueueStats> queues = new ArrayList<>(JobsData.allStats(db).values());
          List<Chart> charts = new ArrayList<>();
          for (JobsData.QueueStats s : queues) {
            charts.add(JobsData.throughput(db, s.queue()));
          }
          return render(page.titled("Queues", "queues"), "queues.jte", new Views.Queues(queues, charts));
        }
        case "/jobs" -> {
          JobFilter f = JobFilter.of(q);
          JobsData.JobsPage jobs = JobsData.list(db, f, Cursor.parse(q.get("after")).orElse(null), JobsData.PAGE);
          List<String> states = new ArrayList<>();
          for (JobState s : JobState.values()) {
            states.add(s.name().toLowerCase(Locale.ROOT));
          }
          return render(page.titled("Jobs", "jobs"), "jobs.jte", new Views.Jobs(f, jobs, JobsData.queues(db), states,
              Actions.BULK_CAP));
        }
        case "/actions" -> {
          List<ActionLog.Entry> entries = ActionLog.entries(db, Cursor.parse(q.get("after")).orElse(null), 51);
          String next = entries.size() > 50 ? Long.toString(entries.get(49).id()) : null;
          return render(page.titled("Actions", "actions"), "actions.jte",
              new Views.Actions(entries.subList(0, Math.min(50, entries.size())), next));
        }
        default -> {
          if (path.startsWith("/jobs/")) {
            long id = id(path.substring("/jobs/".length()));
            Optional<Job> job = JobsData.job(db, id);
            if (job.isEmpty()) {
              return error(page, 404, "No such job", "job " + id + " does not exist (deleted, or pruned when finished)");
            }
            return render(page.titled("Job " + id, "jobs"), "job.jte", new Views.JobPage(job.get()));
          }
          return notFound(page);
        }
      }
    }
  }

  static long id(String s) {
    try {
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + s + "' is not a job id: ids are whole numbers, as in /jobs/42");
    }
  }

  static String required(Params q, String name) {
    return q.get(name).orElseThrow(() -> new IllegalArgumentException("the parameter " + name + " is missing"));
  }

  private static String blank(String s) {
    return s == null ? "" : s;
  }

  private Response render(Page page, String template, Object view) {
    return Response.html(200, templates.render(template, Map.of("page", page, "view", view)));
  }

  private Response notFound(Page page) {
    return error(page, 404, "No such page", "the dashboard has no page here: start from the overview");
  }

  Response error(Page page, int status, String title, String message) {
    return Response.html(status, templates.render("error.jte", Map.of("page", page.titled(title, ""), "status", status,
        "message", message == null ? "" : message)));
  }
}
