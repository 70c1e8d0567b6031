package io.pglock.dashboard.internal;

import io.pglock.dashboard.DashboardAction;
import io.pglock.dashboard.DashboardCaller;
import io.pglock.dashboard.internal.data.ActionLog;
import io.pglock.dashboard.internal.data.Cursor;
import io.pglock.dashboard.internal.data.Db;
import io.pglock.dashboard.internal.data.JobFilter;
import io.pglock.dashboard.internal.data.JobsData;
import io.pglock.dashboard.internal.http.Exchange;
import io.pglock.dashboard.internal.http.Params;
import io.pglock.dashboard.internal.view.Page;
import io.pglock.queue.JobAdmin;
import io.pglock.queue.JobQueueException;
import io.pglock.queue.JobState;
import io.pglock.schedule.TaskAdmin;
import java.io.IOException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The POSTed actions: checked against cross-site requests, read-only mode and the authorizer, then
 * carried out through {@link JobAdmin} and {@link TaskAdmin}, and recorded, refused ones too.
 */
final class Actions {
  /** The most jobs one bulk action changes; the operator repeats it for more. */
  static final int BULK_CAP = 10_000;
  /** An action's time budget, in query timeouts: a bulk action stops there and says so. */
  static final int ACTION_BUDGET = 6;
  private static final Logger log = LoggerFactory.getLogger(Actions.class);
  private final Settings settings;
  private final JobAdmin jobs;

  /**
   * What a POST led to: a redirect to a page, or an error page.
   *
   * @param location where to go, or null for an error
   * @param status the error's status
   * @param title the error's title
   * @param message what went wrong and what to do
   */
  record Outcome(String location, int status, String title, String message) {
    static Outcome redirect(String location) {
      return new Outcome(location, 303, null, null);
    }

    static Outcome refused(int status, String message) {
      return new Outcome(null, status, "Action refused", message);
    }
  }

  Actions(Settings settings) {
    this.settings = settings;
    this.jobs = JobAdmin.of(settings.dataSource(), settings.schema());
  }

  boolean allows(DashboardCaller caller, DashboardAction action) {
    try {
      return settings.authorizer().allows(caller, action);
    } catch (RuntimeException e) {
      log.warn("dashboard: the authorizer failed for {} and {}: refused", caller.recordedName(), action.id(), e);
      return false;
    }
  }

  Outcome post(Exchange ex, Csrf csrf) throws IOException, SQLException {
    Params form = ex.form();
    String path = ex.path();
    DashboardAction action = form.get("action").flatMap(DashboardAction::ofId).orElseThrow(
        () -> new IllegalArgumentException("the form names no known action (action=job.retry, task.pause, ...)"));
    String actor = ex.caller().recordedName();
    String target = target(path, form);
    try (Db db = Db.open(settings.dataSource(), settings.schema(),
        settings.queryTimeout().multipliedBy(ACTION_BUDGET), null)) {
      Optional<String> forged = csrf.check(ex, form.get(Csrf.FIELD));
      if (forged.isPresent()) {
        refused(db, actor, action, target, "anti-forgery check: " + forged.get());
        return Outcome.refused(403, forged.get());
      }
      if (settings.readOnly()) {
        refused(db, actor, action, target, "read-only dashboard");
        return Outcome.refused(403, "this dashboard is read-only: it shows, and takes no actions");
      }
      if (!allows(ex.caller(), action)) {
        refused(db, actor, action, target, "not allowed by the authorizer");
        return Outcome.refused(403, actor + " may not " + action.id() + " (the dashboard's authorizer said no)");
      }
      int changed;
      String back;
      boolean more = false;
      try {
        if (path.equals("/jobs/bulk")) {
          JobFilter filter = JobFilter.of(form);
          Bulk done = bulk(db, action, filter);
          changed = done.changed();
          more = done.more();
          back = "/jobs" + filter.query();
        } else if (path.startsWith("/jobs/")) {
          long id = Router.id(path.substring("/jobs/".length()));
          changed = job(action, id) ? 1 : 0;
          // A deleted job has no page left to go back to: the list, rather than a "No such job".
          back = action == DashboardAction.JOB_DELETE && changed > 0 ? "/jobs" : "/jobs/" + id;
        } else if (path.equals("/task")) {
          String ns = Router.required(form, "namespace");
          String name = Router.required(form, "name");
          task(action, ns, name, "dashboard:" + actor);
          changed = 1;
          back = "/task?namespace=" + Page.enc(ns) + "&name=" + Page.enc(name);
        } else {
          throw new IllegalArgumentException("nothing to act on at " + path);
        }
      } catch (IllegalArgumentException | IllegalStateException | JobQueueException e) {
        ActionLog.record(db, actor, action.id(), target, "failed", 0, e.getMessage());
        if (e instanceof IllegalArgumentException iae) {
          throw iae;
        }
        return new Outcome(null, 409, "The action failed", e.getMessage());
      }
      ActionLog.record(db, actor, action.id(), target, changed > 0 ? "done" : "no_change", changed,
          more ? "stopped at the time limit or the cap; more jobs match" : null);
      return Outcome.redirect(ex.basePath() + back + (back.contains("?") ? "&" : "?") + "done=" + action.id()
          + "&n=" + changed + (more ? "&more=1" : ""));
    }
  }

  /**
   * Records a refusal. A read-only dashboard's role may lack INSERT on the log: the refusal then
   * stands, and is logged instead of turning into a database error.
   */
  private static void refused(Db db, String actor, DashboardAction action, String target, String why) {
    try {
      ActionLog.record(db, actor, action.id(), target, "refused", 0, why);
    } catch (SQLException e) {
      log.warn("dashboard: refused {} of {} on {} ({}); not recorded: {}", action.id(), actor, target, why,
          e.getMessage());
    }
  }

  private static String target(String path, Params form) {
    if (path.equals("/jobs/bulk")) {
      return "jobs " + JobFilter.of(form).describe();
    }
    if (path.startsWith("/jobs/")) {
      return "job " + path.substring("/jobs/".length());
    }
    return "task " + form.get("namespace").orElse("?") + "/" + form.get("name").orElse("?");
  }

  private boolean job(DashboardAction action, long id) {
    return switch (action) {
      case JOB_RETRY -> jobs.retry(id);
      case JOB_DISCARD -> jobs.discard(id);
      case JOB_CANCEL -> jobs.cancel(id);
      case JOB_DELETE -> jobs.delete(id);
      default -> throw new IllegalArgumentException(action.id() + " is not an action on a job");
    };
  }

  private void task(DashboardAction action, String namespace, String name, String by) {
    TaskAdmin admin = TaskAdmin.of(settings.dataSource(), settings.schema(), namespace);
    switch (action) {
      case TASK_TRIGGER -> admin.trigger(name, by);
      case TASK_PAUSE -> admin.pause(name, by);
      case TASK_RESUME -> admin.resume(name, by);
      default -> throw new IllegalArgumentException(action.id() + " is not an action on a task");
    }
  }

  /**
   * What a bulk action did.
   *
   * @param changed how many jobs changed
   * @param more true if it stopped at the cap or the time budget with jobs left
   */
  record Bulk(int changed, boolean more) {}

  /**
   * Applies a job action to the jobs of a filter, newest first: at most {@link #BULK_CAP}, and
   * stopping at the request's deadline, so that a click answers in time whatever the table holds.
   */
  private Bulk bulk(Db db, DashboardAction action, JobFilter filter) throws SQLException {
    Set<JobState> states = JobActions.states(action);
    if (filter.state() == null || !states.contains(filter.state())) {
      throw new IllegalArgumentException(action.id() + " in bulk needs the state filter set to one of "
          + states.toString().toLowerCase(java.util.Locale.ROOT) + ": filter first, then act on what is shown");
    }
    // Collect first, then act: acting while walking would move rows under the walk's cursor.
    List<Long> ids = new ArrayList<>();
    Cursor after = null;
    boolean more = true;
    for (int pages = 0; ids.size() < BULK_CAP && pages < 200 && !db.pastDeadline(); pages++) {
      JobsData.JobsPage page = JobsData.list(db, filter, after, 1_000);
      page.rows().forEach(r -> ids.add(r.id()));
      if (page.next() == null) {
        more = false;
        break;
      }
      after = Cursor.parse(Optional.of(page.next())).orElseThrow();
    }
    int changed = 0;
    int tried = 0;
    for (long id : ids.subList(0, Math.min(ids.size(), BULK_CAP))) {
      if (db.pastDeadline()) {
        break;
      }
      tried++;
      if (job(action, id)) {
        changed++;
      }
    }
    return new Bulk(changed, more || tried < ids.size());
  }

  /** {@return the message about the action just taken, from the redirect's query, or ""} */
  static String flash(Params q) {
    Optional<DashboardAction> done = q.get("done").flatMap(DashboardAction::ofId);
    if (done.isEmpty()) {
      return "";
    }
    long n = q.get("n").map(s -> {
      try {
        return Long.parseLong(s);
      } catch (NumberFormatException e) {
        return 0L;
      }
    }).orElse(0L);
    String what = switch (done.get()) {
      case JOB_RETRY -> "Retried";
      case JOB_DISCARD -> "Discarded";
      case JOB_CANCEL -> "Cancelled";
      case JOB_DELETE -> "Deleted";
      case TASK_TRIGGER -> "Triggered";
      case TASK_PAUSE -> "Paused";
      case TASK_RESUME -> "Resumed";
    };
    if (done.get().id().startsWith("task.")) {
      return what + " the task.";
    }
    String more = q.get("more").isPresent() ? " More match: it stopped at the cap or the time limit; act again for the"
        + " rest." : "";
    return n == 0 ? "Nothing changed: no job was in a state for that." + more
        : what + " " + n + (n == 1 ? " job." : " jobs.") + more;
  }
}
