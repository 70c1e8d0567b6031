package io.pglock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A standalone ZooKeeper of the benchmark's own, from the Debian package {@code zookeeper}
 * ({@code /usr/share/java/zookeeper.jar}, whose manifest names its dependencies): its own data
 * directory and {@code zoo.cfg} in the run's temporary directory, on a free loopback port, the admin
 * server off. The tick is the package's sample configuration's, 2 s, so sessions may last 4 s to
 * 40 s. Stopped by {@link #close()}, and killed when the benchmark's JVM exits.
 */
final class LocalZooKeeper implements AutoCloseable {
  static final Path JAR = Path.of("/usr/share/java/zookeeper.jar");
  static final Duration TICK = Duration.ofSeconds(2);
  private final Process process;
  private final int port;

  private LocalZooKeeper(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /**
   * Starts one and waits until it serves (at most 30 s).
   *
   * @param dir a directory of this run's own, for the configuration, data and log
   * @throws IllegalStateException with the reason if it is not installed or does not start
   */
  static LocalZooKeeper start(Path dir) throws IOException, InterruptedException {
    if (!Files.isRegularFile(JAR)) {
      throw new IllegalStateException(JAR + " not found (Debian package zookeeper: pglock-bench/run.sh installs it "
          + "when it can)");
    }
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Path data = Files.createDirectories(dir.resolve("zookeeper-data"));
    Path cfg = dir.resolve("zoo.cfg");
    Files.write(cfg, List.of(
        "tickTime=" + TICK.toMillis(),
        "dataDir=" + data,
        "clientPort=" + port,
        "clientPortAddress=127.0.0.1",
        "admin.enableServer=false",
        "maxClientCnxns=0",
        "4lw.commands.whitelist=srvr"));
    String java = ProcessHandle.current().info().command().orElse("java");
    Process p = new ProcessBuilder(java, "-Xmx256m", "-cp", JAR.toString(),
        "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg.toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("zookeeper.log").toFile()).start();
    LocalZooKeeper zk = new LocalZooKeeper(p, port);
    Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly, "b8-zookeeper-reaper"));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!zk.serves()) {
      if (!p.isAlive() || System.nanoTime() - deadline > 0) {
        zk.close();
        throw new IllegalStateException("ZooKeeper did not start within 30 s (exit "
            + (p.isAlive() ? "none" : p.exitValue()) + "; see " + dir.resolve("zookeeper.log") + ")");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
    }
    return zk;
  }

  /** Whether the server answers {@code srvr} as a standalone server. */
  private boolean serves() {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
      s.setSoTimeout(1000);
      OutputStream out = s.getOutputStream();
      out.write("srvr".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      String answer = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
      return answer.contains("Mode: standalone");
    } catch (IOException e) {
      return false;
    }
  }

  String connectString() {
    return "127.0.0.1:" + port;
  }

  Duration tick() {
    return TICK;
  }

  /** {@return the server's version, for the notes} */
  String version() {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
      s.setSoTimeout(1000);
      s.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
      String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
      // "Zookeeper version: 3.8.0-<commit>, built on ...": the version alone
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("version: ([0-9.]+)").matcher(answer);
      return m.find() ? m.group(1) : "?";
    } catch (IOException e) {
      return "?";
    }
  }

  /** Stops the server: SIGTERM, then SIGKILL after 10 s (at once if interrupted). */
  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
