package io.pglock.bench;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

/** Command-line options of {@link BenchMain}. Immutable. */
record BenchOptions(String url, String user, String password, Set<String> only, double seconds, int rounds,
    int b4Locks, int trials, boolean trialsGiven, double idleSeconds, int b9Seconds, int b10Jobs, int b10Workers,
    int b11Scale) {

  static final String DEFAULT_URL = "jdbc:postgresql://127.0.0.1:5432/test";

  static final String USAGE = """
      usage: run.sh [--url JDBC_URL] [--user USER] [--password PW] [--only B1,B2,...,B17]
                    [--seconds N] [--rounds N] [--b4-locks N] [--trials N] [--idle-seconds N]
                    [--b9-seconds N] [--b10-jobs N] [--b10-workers N] [--b11-scale N]
        --url       database to run against (default %s); session-level advisory
                    locks are taken on keys drawn at random, so use a database nobody depends on
        --user      user, unless the URL names one (default postgres)
        --password  password, unless the URL gives one (default none)
        --only      benchmarks to run, comma-separated (default all)
        --seconds   length of one measured round, per side (default 1)
        --rounds    measured rounds per side, interleaved with the baseline's (default 10)
        --b4-locks  locks held at once in B4 (default 10000; the server's lock table must have room)
        --trials    B5: backends terminated, one per trial (default 20; a trial waits up to the
                    lease + 5 s for the loss to show); B8: trials per system, setting and fault
                    (default 20; below 10, the peers run at tuned settings only); B9: below 10,
                    the short run (%d s of faults instead of %d s); B10 and B13: below 10, %d
                    jobs instead of %d (B13: and --rounds as given, not at least 20); B11: below 10, %d wake-up samples, %d SIGKILL trials and
                    %d enqueue rounds instead of %d, %d and %d; B14: below 10, %,d jobs and %,d history rows
                    instead of %,d and %,d, %d timed requests per page instead of %d; B15: failovers
                    (default %d, whatever the default above; a trial takes about 20 to 30 s); B16:
                    below 10, %,d jobs per burn-down instead of %,d; B10: below 10, one round
                    instead of five; B12: below 10, --rounds as given (2 at least), not at least 20;
                    B17: below 10, %,d finished jobs in the table and %,d jobs per fleet instead of
                    %,d and %,d
        --idle-seconds  B5: length of one idle window for the CPU figure, per side (default 10)
        --b9-seconds  B9: length of the run with faults, whatever --trials says (default: by --trials)
        --b10-jobs  B10, B13, B14 and B17: no-op jobs queued for each contender's burn-down, whatever --trials says
                    (default: by --trials)
        --b10-workers  B10: workers of every contender (default %d)
        --b11-scale  B11: N times the default counts (%d wake-up samples, %d SIGKILL trials, %d
                    enqueue rounds), whatever --trials says (default: by --trials)
      """.formatted(DEFAULT_URL, B9ScheduledSlots.SHORT_RUN.toSeconds(), B9ScheduledSlots.FULL_RUN.toSeconds(),
          B10BurnDown.SHORT_JOBS, B10BurnDown.FULL_JOBS, B11QueueLatencies.SHORT_SAMPLES, B11QueueLatencies.SHORT_KILLS,
          B11QueueLatencies.SHORT_ROUNDS, B11QueueLatencies.SAMPLES, B11QueueLatencies.KILLS, B11QueueLatencies.ROUNDS,
          B14Dashboard.SHORT_JOBS, B14Dashboard.SHORT_HISTORY, B14Dashboard.FULL_JOBS, B14Dashboard.FULL_HISTORY,
          B14Dashboard.SHORT_SAMPLES, B14Dashboard.SAMPLES, B15Failover.DEFAULT_TRIALS, B16ExactlyOnce.SHORT_JOBS,
          B16ExactlyOnce.FULL_JOBS, B17QueueScale.SHORT_FINISHED, B17QueueScale.SHORT_JOBS,
          B17QueueScale.FULL_FINISHED, B17QueueScale.FULL_JOBS,
          B10BurnDown.DEFAULT_WORKERS, B11QueueLatencies.SAMPLES, B11QueueLatencies.KILLS, B11QueueLatencies.ROUNDS);

  static BenchOptions parse(String[] args) {
    String url = DEFAULT_URL;
    String user = "postgres";
    String password = null;
    Set<String> only = new LinkedHashSet<>(java.util.List.of("B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9",
        "B10", "B11", "B12", "B13", "B14", "B15", "B16", "B17"));
    double seconds = 1;
    int rounds = 10;
    int b4Locks = 10_000;
    int trials = 20;
    boolean trialsGiven = false;
    double idleSeconds = 10;
    int b9Seconds = 0;
    int b10Jobs = 0;
    int b10Workers = B10BurnDown.DEFAULT_WORKERS;
    int b11Scale = 0;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("-h") || a.equals("--help")) {
        throw new IllegalArgumentException("");
      }
      String value;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        value = a.substring(eq + 1);
        a = a.substring(0, eq);
      } else {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("option " + a + " needs a value");
        }
        value = args[++i];
      }
      switch (a) {
        case "--url" -> url = value;
        case "--user" -> user = value;
        case "--password" -> password = value;
        case "--only" -> {
          only = new LinkedHashSet<>();
          for (String id : value.split(",")) {
            String b = id.trim().toUpperCase(Locale.ROOT);
            if (!b.matches("B([1-9]|1[0-7])")) {
              throw new IllegalArgumentException("--only takes B1 to B17, comma-separated: " + value);
            }
            only.add(b);
          }
        }
        case "--seconds" -> {
          seconds = Double.parseDouble(value);
          if (seconds < 0.1 || seconds > 600) {
            throw new IllegalArgumentException("--seconds must be between 0.1 and 600: " + value);
          }
        }
        case "--rounds" -> {
          rounds = Integer.parseInt(value);
          if (rounds < 1 || rounds > 100) {
            throw new IllegalArgumentException("--rounds must be between 1 and 100: " + value);
          }
        }
        case "--b4-locks" -> {
          b4Locks = Integer.parseInt(value);
          if (b4Locks < 1 || b4Locks > 100_000) {
            throw new IllegalArgumentException("--b4-locks must be between 1 and 100000: " + value);
          }
        }
        case "--trials" -> {
          trials = Integer.parseInt(value);
          trialsGiven = true;
          if (trials < 1 || trials > 1000) {
            throw new IllegalArgumentException("--trials must be between 1 and 1000: " + value);
          }
        }
        case "--idle-seconds" -> {
          idleSeconds = Double.parseDouble(value);
          if (idleSeconds < 1 || idleSeconds > 600) {
            throw new IllegalArgumentException("--idle-seconds must be between 1 and 600: " + value);
          }
        }
        case "--b9-seconds" -> {
          b9Seconds = Integer.parseInt(value);
          if (b9Seconds < 20 || b9Seconds > 3600) {
            throw new IllegalArgumentException("--b9-seconds must be between 20 and 3600: " + value);
          }
        }
        case "--b10-jobs" -> {
          b10Jobs = Integer.parseInt(value);
          if (b10Jobs < 100 || b10Jobs > 1_000_000) {
            throw new IllegalArgumentException("--b10-jobs must be between 100 and 1000000: " + value);
          }
        }
        case "--b10-workers" -> {
          b10Workers = Integer.parseInt(value);
          if (b10Workers < 1 || b10Workers > 64) {
            throw new IllegalArgumentException("--b10-workers must be between 1 and 64: " + value);
          }
        }
        case "--b11-scale" -> {
          b11Scale = Integer.parseInt(value);
          if (b11Scale < 1 || b11Scale > 100) {
            throw new IllegalArgumentException("--b11-scale must be between 1 and 100: " + value);
          }
        }
        default -> throw new IllegalArgumentException("unknown option " + a);
      }
    }
    if (!url.startsWith("jdbc:postgresql:")) {
      throw new IllegalArgumentException("--url must be a jdbc:postgresql: URL: " + url);
    }
    return new BenchOptions(url, user, password, Set.copyOf(only), seconds, rounds, b4Locks, trials,
        trialsGiven, idleSeconds, b9Seconds, b10Jobs, b10Workers, b11Scale);
  }

  long roundNanos() {
    return (long) (seconds * 1e9);
  }
}
