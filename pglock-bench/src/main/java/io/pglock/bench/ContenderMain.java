package io.pglock.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * One contender of B8, in a JVM of its own: joins a leader election of one system (pglock,
 * Curator's LeaderLatch or Spring Integration's LockRegistryLeaderInitiator) and reports on stdout,
 * one event per line, a keyword first and {@link System#nanoTime()} last. On Linux nanoTime is
 * CLOCK_MONOTONIC, so the parent compares these times with its own.
 *
 * <p>Arguments: {@code key=value} options: {@code system} (pglock, curator or spring),
 * {@code node}, {@code election}, and the system's own (see the contender classes). A database
 * password comes in the environment variable {@code PGLOCK_BENCH_PASSWORD}.
 *
 * <p>Events: {@code STANDING <t>} once it waits for leadership, {@code ELECTED <t>},
 * {@code REVOKED <reason> <t>}, {@code LEFT <t>} after a clean leave, {@code LEADER <bool> <t>} in
 * answer to {@code CHECK}, {@code COUNT <executes> <commits and rollbacks> <leads> <t>} in answer to
 * {@code COUNT} (what it asked of its database so far, see {@link CountingDataSource}),
 * {@code INFO <text>} and {@code ERROR <text>}. Commands on stdin: {@code LEAVE} (clean handover:
 * leave the election, then exit), {@code CHECK}, {@code COUNT}. It exits when stdin
 * closes, so that it never outlives the benchmark.
 */
public final class ContenderMain {
  private ContenderMain() {}

  /**
   * Entry point of a contender JVM.
   *
   * @param args {@code key=value} options
   */
  public static void main(String[] args) {
    Map<String, String> opts = childOptions(args);
    int status = 0;
    try (ElectionContender contender = create(opts)) {
      contender.stand();
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null) {
          String command = line.trim();
          if (command.equals("CHECK")) {
            out("LEADER " + contender.isLeader() + " " + System.nanoTime());
          } else if (command.equals("COUNT")) {
            out("COUNT " + CountingDataSource.EXECUTES.get() + " " + CountingDataSource.ENDS.get() + " "
                + contender.isLeader() + " " + System.nanoTime());
          } else if (command.equals("LEAVE")) {
            contender.leave();
            out("LEFT " + System.nanoTime());
            break;
          }
        }
      }
    } catch (Throwable t) {
      t.printStackTrace();
      out("ERROR " + String.valueOf(t).replace('\n', ' '));
      status = 2;
    }
    System.exit(status);
  }

  private static ElectionContender create(Map<String, String> opts) throws Exception {
    return switch (opts.get("system")) {
      case "pglock" -> new PglockContender(opts);
      case "curator" -> new CuratorContender(opts);
      case "spring" -> new SpringContender(opts);
      default -> throw new IllegalArgumentException("unknown system " + opts.get("system"));
    };
  }

  /**
   * What every child JVM of the benchmarks (contender or B9 node) does first: warnings only from
   * SLF4J's simple logger (to stderr, which the parent appends to a log), and its {@code key=value}
   * arguments as a map.
   */
  static Map<String, String> childOptions(String[] args) {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
    Map<String, String> opts = new HashMap<>();
    for (String a : args) {
      int eq = a.indexOf('=');
      opts.put(a.substring(0, eq), a.substring(eq + 1));
    }
    return opts;
  }

  /** Prints one event line at once (the parent reads it as it comes). */
  static synchronized void out(String line) {
    System.out.println(line);
    System.out.flush();
  }

  /** Long option, or the default when the option is absent or 0 (0 meaning "the library's default"). */
  static long longOpt(Map<String, String> opts, String key) {
    String v = opts.get(key);
    return v == null || v.isEmpty() ? 0 : Long.parseLong(v);
  }
}
