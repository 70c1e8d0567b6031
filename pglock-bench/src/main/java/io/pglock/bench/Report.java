package io.pglock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** What one benchmark found: table rows (baseline, pglock, ratio, goal, verdict) and notes. */
final class Report {
  enum Verdict { PASS, MISS, INFO }

  record Row(String id, String measure, String baseline, String pglock, String ratio, String goal,
      Verdict verdict) {}

  final String id;
  final String title;
  final List<Row> rows = new ArrayList<>();
  final List<String> notes = new ArrayList<>();
  /** Errors met while the benchmark went on (its rows say where): the run's exit status is 1. */
  final List<String> errors = new ArrayList<>();

  Report(String id, String title) {
    this.id = id;
    this.title = title;
  }

  /** A row whose goal is pglock/baseline at most {@code max}. */
  Report atMost(String measure, String baseline, String pglock, double ratio, double max) {
    rows.add(new Row(id, measure, baseline, pglock, fmt("%.2fx", ratio), fmt("<= %.2fx", max),
        ratio <= max ? Verdict.PASS : Verdict.MISS));
    return this;
  }

  /** A row whose goal is pglock/baseline at least {@code min}. */
  Report atLeast(String measure, String baseline, String pglock, double ratio, double min) {
    rows.add(new Row(id, measure, baseline, pglock, fmt("%.2fx", ratio), fmt(">= %.2fx", min),
        ratio >= min ? Verdict.PASS : Verdict.MISS));
    return this;
  }

  /** A row with an absolute goal on the pglock figure. */
  Report limit(String measure, String baseline, String pglock, String goal, boolean met) {
    rows.add(new Row(id, measure, baseline, pglock, "-", goal, met ? Verdict.PASS : Verdict.MISS));
    return this;
  }

  /** A row without a goal. */
  Report info(String measure, String baseline, String pglock, String ratio) {
    rows.add(new Row(id, measure, baseline, pglock, ratio, "-", Verdict.INFO));
    return this;
  }

  Report note(String format, Object... args) {
    notes.add(fmt(format, args));
    return this;
  }

  static String fmt(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }

  static String table(List<Report> reports) {
    String[] head = {"id", "measure", "baseline", "pglock", "ratio", "goal", "result"};
    List<String[]> lines = new ArrayList<>();
    for (Report r : reports) {
      for (Row row : r.rows) {
        lines.add(new String[] {row.id(), row.measure(), row.baseline(), row.pglock(), row.ratio(), row.goal(),
            row.verdict().name()});
      }
    }
    return render(head, lines);
  }

  /** A Markdown table of the given columns, each as wide as its widest cell. */
  static String render(String[] head, List<String[]> rows) {
    List<String[]> lines = new ArrayList<>();
    lines.add(head);
    lines.addAll(rows);
    int[] width = new int[head.length];
    for (String[] l : lines) {
      for (int i = 0; i < l.length; i++) {
        width[i] = Math.max(width[i], l[i].length());
      }
    }
    StringBuilder b = new StringBuilder();
    for (int n = 0; n < lines.size(); n++) {
      String[] l = lines.get(n);
      b.append('|');
      for (int i = 0; i < l.length; i++) {
        b.append(' ').append(pad(l[i], width[i])).append(" |");
      }
      b.append('\n');
      if (n == 0) {
        b.append('|');
        for (int w : width) {
          b.append('-').append("-".repeat(w)).append("-|");
        }
        b.append('\n');
      }
    }
    return b.toString();
  }

  private static String pad(String s, int w) {
    return s + " ".repeat(w - s.length());
  }
}
