package io.pglock.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

/**
 * One node of B9, in a JVM of its own: runs the per-second task with one system's scheduler
 * ({@link PglockTicker} or {@link ShedLockTicker}); each run writes its row through
 * {@link SlotResults}. Prints {@code READY <System.nanoTime()>} once the task is scheduled, and
 * {@code ERROR <text>} for a failure (a fatal one ends the JVM with status 2). Exits after
 * {@code LEAVE} on stdin, or when stdin closes, so that it never outlives the benchmark.
 *
 * <p>Arguments: {@code key=value}: {@code system} (pglock or shedlock), {@code node}, {@code url},
 * {@code user}, {@code skewMs} (how far the node's clock is ahead of the system's). A password comes
 * in the environment variable {@code PGLOCK_BENCH_PASSWORD}.
 */
public final class SlotNodeMain {
  /** Connections of a node's HikariCP pool: its results writer's, and ShedLock's lock statements. */
  static final int POOL_SIZE = 2;

  private SlotNodeMain() {}

  /**
   * Entry point of a B9 node JVM.
   *
   * @param args {@code key=value} options
   */
  public static void main(String[] args) {
    Map<String, String> opts = ContenderMain.childOptions(args);
    String system = opts.get("system");
    String node = opts.get("node");
    Clock clock = Clock.offset(Clock.systemUTC(), Duration.ofMillis(Long.parseLong(opts.getOrDefault("skewMs", "0"))));
    int status = 0;
    HikariDataSource pool = ChildDataSources.pool(opts, node, POOL_SIZE);
    try (SlotResults results = new SlotResults(pool, system, node); Ticker ticker = create(system, opts, clock, pool,
        results)) {
      ticker.start();
      ContenderMain.out("READY " + System.nanoTime());
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null && !line.trim().equals("LEAVE")) {
          // no other command
        }
      }
    } catch (Throwable t) {
      t.printStackTrace();
      ContenderMain.out("ERROR " + String.valueOf(t).replace('\n', ' '));
      status = 2;
    }
    System.exit(status);
  }

  private static Ticker create(String system, Map<String, String> opts, Clock clock, HikariDataSource pool,
      SlotResults results) {
    return switch (system) {
      case "pglock" -> new PglockTicker(opts, clock, results);
      case "shedlock" -> new ShedLockTicker(pool, clock, results);
      default -> throw new IllegalArgumentException("unknown system " + system);
    };
  }
}
