package io.pglock.bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The parent's handle on one contender JVM ({@link ContenderMain}; B9's nodes are {@link SlotNodeMain}):
 * starts it, reads its events into the fleet's {@link FleetEvents}, sends it commands and injects
 * faults (SIGKILL, SIGSTOP, SIGCONT). Every contender started is killed at the latest when the
 * benchmark's JVM exits, paused or not.
 */
final class Contender {
  /** Contenders not yet reaped, killed by a shutdown hook if the benchmark ends abnormally. */
  private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly),
        "bench-child-reaper"));
  }

  final String node;
  private final Process process;
  private final OutputStream stdin;
  /** Set from this contender's events: it printed ELECTED and not yet REVOKED or LEFT. */
  private volatile boolean leading;
  private volatile boolean standing;
  private volatile boolean paused;

  private Contender(String node, Process process) {
    this.node = node;
    this.process = process;
    this.stdin = process.getOutputStream();
  }

  /**
   * Starts a contender JVM with this JVM's class path.
   *
   * @param args {@link ContenderMain}'s options
   * @param password the database password for its environment, or null
   * @param log file that receives the contender's stderr (appended)
   */
  static Contender start(String node, List<String> args, String password, File log, FleetEvents events)
      throws IOException {
    return start(ContenderMain.class, node, args, password, log, events);
  }

  /**
   * Starts a child JVM of another main class (B9's {@link SlotNodeMain}) the same way: this JVM's
   * class path and flags, events on stdout, commands on stdin, stderr appended to the log.
   */
  static Contender start(Class<?> main, String node, List<String> args, String password, File log,
      FleetEvents events) throws IOException {
    // the same small, fast-starting JVM for every system: callbacks, not throughput, are measured
    return start(main, List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xms32m", "-Xmx128m"), node, args,
        password, log, events);
  }

  /** As above, with these JVM flags (B17's workers: throughput is measured, so the full JIT). */
  static Contender start(Class<?> main, List<String> jvmFlags, String node, List<String> args, String password,
      File log, FleetEvents events) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(javaBinary());
    cmd.addAll(jvmFlags);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log));
    if (password != null) {
      pb.environment().put("PGLOCK_BENCH_PASSWORD", password);
    }
    Process p = pb.start();
    LIVE.add(p);
    Contender c = new Contender(node, p);
    Thread reader = new Thread(() -> c.read(events), "bench-read-" + node);
    reader.setDaemon(true);
    reader.start();
    return c;
  }

  private static String javaBinary() {
    return ProcessHandle.current().info().command()
        .orElse(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
  }

  private void read(FleetEvents events) {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
        StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        long readAt = System.nanoTime();
        String[] w = line.trim().split(" ");
        String kind = w[0];
        long t = readAt;
        if (w.length > 1 && w[w.length - 1].matches("-?\\d+") && !kind.equals("INFO") && !kind.equals("ERROR")) {
          t = Long.parseLong(w[w.length - 1]);
        }
        String detail = line.trim().substring(kind.length()).trim();
        switch (kind) {
          case "ELECTED" -> leading = true;
          case "REVOKED", "LEFT" -> leading = false;
          case "STANDING" -> standing = true;
          default -> { }
        }
        events.add(new FleetEvent(this, kind, detail, t));
      }
    } catch (IOException e) {
      // the process is gone: its end is seen through isAlive()
    }
    events.add(new FleetEvent(this, "EXITED", "", System.nanoTime()));
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** Whether its last election event was ELECTED (and it is alive). */
  boolean leading() {
    return leading && process.isAlive();
  }

  boolean standing() {
    return standing && process.isAlive();
  }

  long pid() {
    return process.pid();
  }

  /** Sends one command line; false if the contender's stdin is closed. */
  boolean send(String command) {
    try {
      stdin.write((command + "\n").getBytes(StandardCharsets.UTF_8));
      stdin.flush();
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** SIGKILL. */
  void kill() {
    process.destroyForcibly();
  }

  /** SIGSTOP: the JVM stops at once, every thread, with its sockets left open. */
  void pause() throws IOException, InterruptedException {
    signal("STOP");
    paused = true;
  }

  /** SIGCONT. */
  void resume() throws IOException, InterruptedException {
    signal("CONT");
    paused = false;
  }

  private void signal(String name) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
        .redirectErrorStream(true).start();
    if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      kill.destroyForcibly();
      throw new IOException("kill -" + name + " " + process.pid() + " failed");
    }
  }

  /** Waits for the process to exit; true if it did within the timeout. */
  boolean awaitExit(Duration timeout) throws InterruptedException {
    boolean exited = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
    if (exited) {
      LIVE.remove(process);
    }
    return exited;
  }

  /** Ends the contender: a paused one is killed; others are asked to leave and killed after 5 s. */
  void stop() throws InterruptedException {
    if (!paused && process.isAlive()) {
      send("LEAVE");
      try {
        stdin.close();
      } catch (IOException e) {
        // gone already
      }
      if (awaitExit(Duration.ofSeconds(5))) {
        return;
      }
    }
    process.destroyForcibly();
    awaitExit(Duration.ofSeconds(10));
  }

  /**
   * Stops each of the contenders in turn ({@link #stop()}); once this thread is interrupted, kills
   * the rest at once.
   */
  static void stopAll(List<Contender> all) {
    for (Contender c : all) {
      if (Thread.currentThread().isInterrupted()) {
        c.kill();
        continue;
      }
      try {
        c.stop();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        c.kill();
      }
    }
  }

  @Override
  public String toString() {
    return node + "(pid " + process.pid() + ")";
  }
}
