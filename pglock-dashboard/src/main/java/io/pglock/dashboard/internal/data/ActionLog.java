package io.pglock.dashboard.internal.data;

import java.sql.SQLException;
import java.time.Instant;
import java.util.List;

/** The record of operators' actions: table {@code dashboard_action}. */
public final class ActionLog {
  private ActionLog() {}

  /**
   * One recorded action.
   *
   * @param id its id
   * @param at when
   * @param actor who
   * @param action what, such as job.retry
   * @param target on what
   * @param outcome done, no_change, refused or failed
   * @param affected how many jobs or tasks changed
   * @param detail why refused or failed, or null
   */
  public record Entry(long id, Instant at, String actor, String action, String target, String outcome, int affected,
      String detail) {}

  /**
   * Records an action, durably whatever {@code synchronous_commit} says (as the queue's claims and
   * the scheduler's run rows are): the statement raises it to {@code on} for its own transaction
   * when it is {@code off}. The WAL is one stream, so flushing this record's commit also flushes the
   * commits of the action it records, made just before on the same server: once the page says done,
   * the change and its record survive a crash.
   */
  public static void record(Db db, String actor, String action, String target, String outcome, int affected,
      String detail) throws SQLException {
    db.update("INSERT INTO {s}.dashboard_action (actor, action, target, outcome, affected, detail)"
        + " SELECT ?, ?, ?, ?, ?, ? FROM (SELECT set_config('synchronous_commit', CASE"
        + " current_setting('synchronous_commit') WHEN 'off' THEN 'on' ELSE current_setting('synchronous_commit')"
        + " END, true)) durable", ps -> {
          ps.setString(1, actor);
          ps.setString(2, action);
          ps.setString(3, target);
          ps.setString(4, outcome);
          ps.setInt(5, affected);
          ps.setString(6, detail);
        });
  }

  /** {@return recorded actions, newest first, before an id (exclusive), or from the newest} */
  public static List<Entry> entries(Db db, Cursor before, int limit) throws SQLException {
    return db.list("SELECT id, at, actor, action, target, outcome, affected, detail FROM {s}.dashboard_action"
        + " WHERE id < ? ORDER BY id DESC LIMIT ?", ps -> {
          ps.setLong(1, before == null ? Long.MAX_VALUE : before.id());
          ps.setInt(2, limit);
        }, rs -> new Entry(rs.getLong("id"), Db.instant(rs, "at"), rs.getString("actor"), rs.getString("action"),
            rs.getString("target"), rs.getString("outcome"), rs.getInt("affected"), rs.getString("detail")));
  }
}
