package io.pglock.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs the benchmarks and prints, for each, the baseline figure, the pglock figure, the ratio, the
 * goal and PASS or MISS. Benchmarks are not tests: a MISS does not fail the run (exit status 0);
 * an error does (exit status 1; 2 for bad options).
 */
public final class BenchMain {
  private BenchMain() {}

  public static void main(String[] args) {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
    BenchOptions options;
    try {
      options = BenchOptions.parse(args);
    } catch (IllegalArgumentException e) {
      if (!e.getMessage().isEmpty()) {
        System.err.println("error: " + e.getMessage());
      }
      System.err.print(BenchOptions.USAGE);
      System.exit(e.getMessage().isEmpty() ? 0 : 2);
      return;
    }
    try {
      System.exit(run(options));
    } catch (Exception e) {
      System.err.println("error: " + e);
      e.printStackTrace();
      System.exit(1);
    }
  }

  /** The 1-minute load average from /proc/loadavg, or -1 where there is none. */
  static double loadAverage() {
    try {
      String s = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg"));
      return Double.parseDouble(s.substring(0, s.indexOf(' ')));
    } catch (java.io.IOException | RuntimeException e) {
      return -1;
    }
  }

  static int run(BenchOptions o) throws Exception {
    Db db = new Db(o);
    List<Benchmark> all = List.of(new B1Uncontended(), new B2ManyThreads(), new B3HotKey(), new B4ManyHeld(),
        new B5LossDetection(), new B6Fencing(), new B7History(), new B8Failover(), new B9ScheduledSlots(),
        new B10BurnDown(), new B11QueueLatencies(), new B12NameRecording(), new B13ObservabilityCost(),
        new B14Dashboard(), new B15Failover(), new B16ExactlyOnce(), new B17QueueScale());
    String server;
    try (Connection c = db.connect(db.runPrefix + "-monitor"); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_setting('server_version'), current_database()")) {
      rs.next();
      server = "PostgreSQL " + rs.getString(1) + ", database " + rs.getString(2);
    }
    System.out.printf("pglock benchmarks, %s%n", ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME));
    System.out.printf("%s; Java %s; %d CPUs; %d rounds of %.1f s per side, interleaved; tables give medians over quiet rounds%n%n",
        server, Runtime.version(), Runtime.getRuntime().availableProcessors(), o.rounds(), o.seconds());
    List<Report> reports = new ArrayList<>();
    int errors = 0;
    for (Benchmark b : all) {
      if (!o.only().contains(b.id())) {
        continue;
      }
      System.out.printf("%s: %s ...%n", b.id(), b.title());
      long t0 = System.nanoTime();
      double load0 = loadAverage();
      try {
        Report r = b.run(db, o);
        double load1 = loadAverage();
        if (load0 >= 0) {
          int cpus = Runtime.getRuntime().availableProcessors();
          r.note("load average (1 min) %.1f at start, %.1f at end, on %d CPUs%s", load0, load1, cpus,
              Math.max(load0, load1) > cpus ? ": SATURATED by other processes; latencies are inflated, most "
                  + "for the side with more round trips (and thread wake-ups) per cycle" : "");
        }
        reports.add(r);
        System.out.print(Report.table(List.of(r)));
        for (String note : r.notes) {
          System.out.println("  " + note);
        }
        for (String error : r.errors) {
          errors++;
          System.out.println("  ERROR: " + error);
        }
      } catch (Exception e) {
        errors++;
        System.out.println("  ERROR: " + e);
        e.printStackTrace(System.out);
      }
      System.out.printf("  (%.0f s)%n%n", (System.nanoTime() - t0) / 1e9);
    }
    System.out.println("Summary (ratio = pglock / baseline, median over the quiet ones of the interleaved rounds):");
    System.out.print(Report.table(reports));
    return errors == 0 ? 0 : 1;
  }
}
