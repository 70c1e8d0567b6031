package io.pglock.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A PostgreSQL server of a test's own, on a temporary data directory and a free port, for tests
 * that stop or crash the server (never the shared one). It runs the system's binaries
 * ({@code /usr/lib/postgresql/<version>/bin}, or the directory in {@code PGLOCK_PG_BIN}); as root,
 * which initdb refuses, it runs them as the OS user {@code postgres} through {@code runuser}.
 * {@link #close()} stops the server (immediate mode) and deletes the directory, whatever state
 * they are in.
 *
 * <p>For failover tests a server can be given a streaming standby ({@link #startStandby}), a real
 * second server made by {@code pg_basebackup}, which {@link #promote()} turns into a primary; the
 * multi-host {@link #failoverUrl} reaches whichever of the two is the primary.
 */
public final class PrivateServer implements AutoCloseable {
  /** Thrown when this machine cannot run a server of our own: the test should be skipped. */
  public static final class Unavailable extends Exception {
    private static final long serialVersionUID = 1L;

    Unavailable(String reason) {
      super(reason);
    }
  }

  private static final long COMMAND_TIMEOUT_S = 120;

  private final Path bin;
  private final Path dir;
  private final Path data;
  private final Path log;
  private final int port;
  private final boolean asPostgres;
  private final List<String> settings;

  private PrivateServer(Path bin, Path dir, int port, boolean asPostgres, List<String> settings) {
    this.bin = bin;
    this.dir = dir;
    this.data = dir.resolve("data");
    this.log = dir.resolve("server.log");
    this.port = port;
    this.asPostgres = asPostgres;
    this.settings = settings;
  }

  /**
   * Creates a cluster in a new temporary directory and starts it.
   *
   * @param settings server settings, {@code name=value}, passed as {@code -c} options at every start,
   *     after the defaults ({@code listen_addresses=127.0.0.1}, {@code max_connections=30}, ...), which
   *     they override: the last {@code -c} of a setting wins
   * @return the running server
   * @throws Unavailable with the reason if no server can be created or started here (the
   *     directory is deleted again)
   * @throws IOException if the temporary directory cannot be made or a command cannot be started
   * @throws InterruptedException if interrupted while a command runs
   */
  public static PrivateServer start(String... settings) throws Unavailable, IOException, InterruptedException {
    Path bin = findBinaries().orElseThrow(() -> new Unavailable("no PostgreSQL binaries (initdb, pg_ctl) in "
        + "/usr/lib/postgresql/*/bin and PGLOCK_PG_BIN is not set"));
    boolean root = "root".equals(System.getProperty("user.name"));
    if (root && !Files.isExecutable(Path.of("/usr/sbin/runuser")) && !Files.isExecutable(Path.of("/sbin/runuser"))) {
      throw new Unavailable("running as root (initdb refuses root) and there is no runuser to run it as postgres");
    }
    Path dir = Files.createTempDirectory("pglock-private-pg-");
    PrivateServer server = new PrivateServer(bin, dir, freePort(), root, List.of(settings));
    boolean started = false;
    try {
      if (root) {
        try {
          UserPrincipal postgres = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
          Files.setOwner(dir, postgres);
        } catch (IOException e) {
          throw new Unavailable("running as root (initdb refuses root) and the directory cannot be given to the "
              + "OS user postgres: " + e);
        }
      }
      Result init = server.run("initdb", "-D", server.data.toString(), "-U", "postgres", "-A", "trust",
          "--no-sync", "-E", "UTF8", "--locale=C");
      if (init.status != 0) {
        throw new Unavailable("initdb failed (" + init.status + "): " + init.output);
      }
      try {
        server.startServer();
      } catch (IllegalStateException e) {
        throw new Unavailable("the server did not start: " + e.getMessage());
      }
      started = true;
      return server;
    } finally {
      if (!started) {
        server.close();
      }
    }
  }

  /**
   * Makes a streaming standby of this server (which must run) and starts it: a base backup taken
   * with {@code pg_basebackup -R} into a new temporary directory, on a free port, replaying this
   * server's WAL as it streams in, read-only (hot standby) until {@link #promote()}.
   *
   * <p>Whether the primary waits for it is the primary's setting: start the primary with
   * {@code synchronous_standby_names='*'} for synchronous replication (a commit returns once the
   * standby has flushed it), without it for asynchronous replication (the default).
   *
   * @param settings the standby's own settings (the primary's are not copied: after promotion a
   *     copied {@code synchronous_standby_names} would make every commit wait for a standby that is gone)
   * @return the running standby, caught up with this server's WAL at the time of the backup
   * @throws Unavailable if the standby cannot be made or started here
   * @throws IOException if a directory cannot be made or a command cannot be started
   * @throws InterruptedException if interrupted while a command runs
   */
  public PrivateServer startStandby(String... settings) throws Unavailable, IOException, InterruptedException {
    Path standbyDir = Files.createTempDirectory("pglock-private-standby-");
    PrivateServer standby = new PrivateServer(bin, standbyDir, freePort(), asPostgres, List.of(settings));
    boolean started = false;
    try {
      if (asPostgres) {
        Files.setOwner(standbyDir,
            standbyDir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres"));
      }
      // -R writes standby.signal and primary_conninfo; application_name names it in pg_stat_replication
      Result backup = run("pg_basebackup", "-D", standby.data.toString(), "-R", "-X", "stream", "-c", "fast",
          "--no-sync", "-d", "host=127.0.0.1 port=" + port + " user=postgres application_name=pglock_standby");
      if (backup.status != 0) {
        throw new Unavailable("pg_basebackup failed (" + backup.status + "): " + backup.output);
      }
      try {
        standby.startServer();
      } catch (IllegalStateException e) {
        throw new Unavailable("the standby did not start: " + e.getMessage());
      }
      started = true;
      return standby;
    } finally {
      if (!started) {
        standby.close();
      }
    }
  }

  /**
   * Promotes this standby ({@code pg_ctl promote -w}): it stops replaying, starts a new timeline and
   * accepts writes; returns once it does.
   *
   * @throws IOException if {@code pg_ctl} cannot be started
   * @throws InterruptedException if interrupted while it runs
   * @throws IllegalStateException if the promotion failed (the message has the server's log)
   */
  public void promote() throws IOException, InterruptedException {
    Result r = run("pg_ctl", "promote", "-w", "-t", "60", "-D", data.toString());
    if (r.status != 0) {
      throw new IllegalStateException("pg_ctl promote failed (" + r.status + "): " + r.output + "\nserver log:\n"
          + serverLog());
    }
  }

  /**
   * Stops this standby's WAL receiver (its {@code primary_conninfo} emptied and reloaded) and waits
   * until it is gone: what the primary commits from now on never reaches the standby, the worst
   * case of asynchronous replication's lag, made deterministic for a test.
   *
   * @throws java.sql.SQLException if the standby cannot be reached
   * @throws AssertionError if the receiver is still running after 60 s
   */
  public void stopReceivingWal() throws java.sql.SQLException {
    try (java.sql.Connection c = dataSource("pglock-standby-control").getConnection();
        java.sql.Statement s = c.createStatement()) {
      s.execute("ALTER SYSTEM SET primary_conninfo = ''");
      s.execute("SELECT pg_reload_conf()");
      Await.until("the standby's WAL receiver stopped", java.time.Duration.ofSeconds(60), () -> {
        try (java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_wal_receiver")) {
          rs.next();
          return rs.getLong(1) == 0;
        } catch (java.sql.SQLException e) {
          throw new IllegalStateException(e);
        }
      });
    }
  }

  /**
   * A pgjdbc multi-host URL over the servers, in order, that connects only to the one that is the
   * primary ({@code targetServerType=primary}), rechecking a host's role after a second
   * ({@code hostRecheckSeconds=1}; pgjdbc's default of 10 s would keep a promoted standby marked
   * "secondary" that long), with a 10 s connect timeout.
   *
   * @param servers the servers, the primary first
   * @return the URL, database postgres
   */
  public static String failoverUrl(PrivateServer... servers) {
    StringBuilder hosts = new StringBuilder();
    for (PrivateServer s : servers) {
      hosts.append(hosts.length() == 0 ? "" : ",").append("127.0.0.1:").append(s.port);
    }
    return "jdbc:postgresql://" + hosts + "/postgres?targetServerType=primary&hostRecheckSeconds=1&connectTimeout=10";
  }

  /**
   * Starts the server again (after {@link #stopImmediate()}); waits until it accepts connections.
   *
   * @throws IOException if {@code pg_ctl} cannot be started
   * @throws InterruptedException if interrupted while it runs
   * @throws IllegalStateException if the server did not start (the message has its log)
   */
  public void startServer() throws IOException, InterruptedException {
    String options = "-p " + port + " -c listen_addresses=127.0.0.1 -c unix_socket_directories=" + dir
        + " -c max_connections=30 -c shared_buffers=16MB";
    for (String setting : settings) {
      options += " -c " + setting;
    }
    Result r = run("pg_ctl", "start", "-w", "-t", "60", "-D", data.toString(), "-l", log.toString(), "-o", options);
    if (r.status != 0) {
      throw new IllegalStateException("pg_ctl start failed (" + r.status + "): " + r.output + "\nserver log:\n"
          + serverLog());
    }
  }

  /**
   * {@code pg_ctl stop -m immediate}: the postmaster and its backends quit at once, without a
   * checkpoint, as in a crash (commits not yet written from the WAL buffers are lost); the next
   * start runs crash recovery.
   *
   * @throws IOException if {@code pg_ctl} cannot be started
   * @throws InterruptedException if interrupted while it runs
   * @throws IllegalStateException if {@code pg_ctl} failed
   */
  public void stopImmediate() throws IOException, InterruptedException {
    Result r = run("pg_ctl", "stop", "-m", "immediate", "-w", "-t", "60", "-D", data.toString());
    if (r.status != 0) {
      throw new IllegalStateException("pg_ctl stop -m immediate failed (" + r.status + "): " + r.output);
    }
  }

  /** {@return the server's TCP port} */
  public int port() {
    return port;
  }

  /** {@return the JDBC URL of database postgres} */
  public String jdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
  }

  /**
   * A non-pooling data source, user postgres (trust authentication), connect timeout 10 s.
   *
   * @param applicationName the {@code application_name} of its connections
   * @return the data source
   */
  public DataSource dataSource(String applicationName) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(jdbcUrl());
    ds.setUser("postgres");
    ds.setApplicationName(applicationName);
    ds.setConnectTimeout(10);
    return ds;
  }

  /** {@return the server's log so far, for failure messages} */
  public String serverLog() {
    try {
      return Files.exists(log) ? Files.readString(log) : "(no log)";
    } catch (IOException e) {
      return "(log unreadable: " + e + ")";
    }
  }

  /** Stops the server if it runs (immediate mode) and deletes its directory. */
  @Override
  public void close() {
    try {
      if (Files.exists(data.resolve("postmaster.pid"))) {
        Result r = run("pg_ctl", "stop", "-m", "immediate", "-w", "-t", "60", "-D", data.toString());
        if (r.status != 0 && Files.exists(data.resolve("postmaster.pid"))) {
          System.err.println("PrivateServer: pg_ctl stop failed (" + r.status + "): " + r.output);
        }
      }
    } catch (IOException e) {
      System.err.println("PrivateServer: pg_ctl stop failed: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      deleteTree(dir);
    }
  }

  @Override
  public String toString() {
    return "PrivateServer[" + dir + ", port " + port + "]";
  }

  private record Result(int status, String output) {}

  private Result run(String program, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    if (asPostgres) {
      command.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    command.add(bin.resolve(program).toString());
    command.addAll(List.of(args));
    Path out = Files.createTempFile("pglock-private-pg-cmd-", ".out"); // a file: pg_ctl's server keeps pipes open
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile())
          .directory(asPostgres ? Path.of("/").toFile() : null).start();
      if (!p.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
        return new Result(-1, "timed out after " + COMMAND_TIMEOUT_S + " s: " + String.join(" ", command) + "\n"
            + Files.readString(out, StandardCharsets.UTF_8));
      }
      return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
    }
  }

  private static Optional<Path> findBinaries() {
    String configured = System.getenv("PGLOCK_PG_BIN");
    if (configured != null && !configured.isBlank()) {
      Path p = Path.of(configured);
      return hasBinaries(p) ? Optional.of(p) : Optional.empty();
    }
    Path root = Path.of("/usr/lib/postgresql");
    if (!Files.isDirectory(root)) {
      return Optional.empty();
    }
    try (Stream<Path> versions = Files.list(root)) {
      return versions.map(v -> v.resolve("bin")).filter(PrivateServer::hasBinaries)
          .max(Comparator.comparingInt(PrivateServer::majorVersion));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static boolean hasBinaries(Path bin) {
    return Files.isExecutable(bin.resolve("initdb")) && Files.isExecutable(bin.resolve("pg_ctl"));
  }

  private static int majorVersion(Path bin) {
    try {
      return Integer.parseInt(bin.getParent().getFileName().toString());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> all = Files.walk(root)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    } catch (IOException | UncheckedIOException e) {
      System.err.println("PrivateServer: could not delete " + root + ": " + e);
    }
  }
}
