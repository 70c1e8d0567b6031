package io.pglock.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A client of pglock's SQL API in another language, run as a real child process against the
 * {@link TestDatabase}: the scripts under {@code clients/} at the root of the repository (Python with
 * psycopg2, Node with {@code pg}), which take the same locks, write the same history and enqueue the
 * same jobs as the Java library, through the SQL functions only (docs/sql-api.md).
 *
 * <p>The child connects through libpq's environment ({@code PGHOST}, {@code PGPORT},
 * {@code PGDATABASE}, {@code PGUSER}, {@code PGPASSWORD}, {@code PGAPPNAME}), so its backend carries
 * the application name the test gives, and a test can find (and terminate) exactly its own backends.
 * It prints one line per event on its standard output; {@link #awaitLine} waits for the next with a
 * deadline. Not thread-safe: one test thread drives it.
 */
public final class SqlClientProcess implements AutoCloseable {

  /** The languages with a client under {@code clients/}. */
  public enum Language {
    /** {@code clients/python/sql_api_client.py}: a {@code python3} that can import psycopg2. */
    PYTHON,
    /** {@code clients/node/sql_api_client.js}: {@code node}, with {@code pg} installed by {@code npm ci}. */
    NODE
  }

  private static final String END = "\u0000end";

  private final Process process;
  private final String description;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final StringBuffer stderr = new StringBuffer();

  private SqlClientProcess(Process process, String description) {
    this.process = process;
    this.description = description;
    Thread out = new Thread(() -> drain(process.getInputStream(), lines::add, true), description + "-out");
    Thread err = new Thread(() -> drain(process.getErrorStream(), l -> stderr.append(l).append('\n'), false),
        description + "-err");
    out.setDaemon(true);
    err.setDaemon(true);
    out.start();
    err.start();
  }

  /**
   * Skips the calling test (a JUnit assumption) when the language's client cannot run here: no
   * interpreter, or its PostgreSQL driver is not installed ({@code .ci/run} installs both).
   *
   * @param language the client's language
   */
  public static void assumeAvailable(Language language) {
    Optional<String> missing = missing(language);
    Assumptions.assumeTrue(missing.isEmpty(), () -> language + " client of the SQL API cannot run: "
        + missing.orElse("") + " (.ci/run installs it)");
  }

  /**
   * Starts the client.
   *
   * @param language which client
   * @param applicationName the {@code application_name} of its connection
   * @param args the script's arguments: the schema, a command and its arguments
   * @return the running client; close it
   */
  public static SqlClientProcess start(Language language, String applicationName, String... args) {
    List<String> command = new ArrayList<>();
    Path clients = clientsDirectory();
    if (language == Language.PYTHON) {
      command.add(python().orElseThrow(() -> new IllegalStateException("no python3 with psycopg2")));
      command.add(clients.resolve("python/sql_api_client.py").toString());
    } else {
      command.add("node");
      command.add(clients.resolve("node/sql_api_client.js").toString());
    }
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().putAll(connectionEnvironment(applicationName));
    try {
      return new SqlClientProcess(pb.start(), language.name().toLowerCase(java.util.Locale.ROOT) + " client "
          + String.join(" ", args));
    } catch (IOException e) {
      throw new UncheckedIOException("starting " + command, e);
    }
  }

  /**
   * Runs the client to its end and returns what it printed.
   *
   * @param language which client
   * @param timeout the longest it may run
   * @param applicationName the {@code application_name} of its connection
   * @param args the script's arguments
   * @return its lines of standard output
   * @throws AssertionError if it does not exit 0 within the timeout (with what it printed)
   */
  public static List<String> run(Language language, Duration timeout, String applicationName, String... args) {
    try (SqlClientProcess p = start(language, applicationName, args)) {
      p.awaitExit(timeout);
      List<String> out = new ArrayList<>();
      p.lines.drainTo(out);
      out.remove(END);
      return out;
    }
  }

  /**
   * Waits for the next line the client prints.
   *
   * @param timeout the longest to wait
   * @return the line
   * @throws AssertionError if none comes in time, or the client ended first (with its error output)
   */
  public String awaitLine(Duration timeout) {
    String line;
    try {
      line = lines.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted waiting for " + description, e);
    }
    if (line == null) {
      throw new AssertionError("no line from " + description + " within " + timeout + "; stderr: " + stderr);
    }
    if (line.equals(END)) {
      throw new AssertionError(description + " ended without the line expected; stderr: " + stderr);
    }
    return line;
  }

  /**
   * Sends a line to the client's standard input.
   *
   * @param line the line (without its end)
   */
  public void send(String line) {
    try {
      OutputStream in = process.getOutputStream();
      in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      in.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("writing to " + description + "; stderr: " + stderr, e);
    }
  }

  /**
   * Waits for the client to exit with status 0.
   *
   * @param timeout the longest to wait
   * @throws AssertionError if it runs longer, or exits with another status (with its error output)
   */
  public void awaitExit(Duration timeout) {
    try {
      if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        throw new AssertionError(description + " still runs after " + timeout + "; stderr: " + stderr);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted waiting for " + description, e);
    }
    if (process.exitValue() != 0) {
      throw new AssertionError(description + " exited " + process.exitValue() + "; stderr: " + stderr);
    }
  }

  /** Kills the client if it still runs. */
  @Override
  public void close() {
    process.destroyForcibly();
    try {
      process.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void drain(java.io.InputStream in, java.util.function.Consumer<String> sink, boolean endMark) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      for (String l = r.readLine(); l != null; l = r.readLine()) {
        sink.accept(l);
      }
    } catch (IOException e) {
      // the process was killed: nothing more to read
    }
    if (endMark) {
      sink.accept(END);
    }
  }

  /** {@return why the language's client cannot run here, or empty if it can} */
  private static Optional<String> missing(Language language) {
    Path clients;
    try {
      clients = clientsDirectory();
    } catch (IllegalStateException e) {
      return Optional.of(e.getMessage());
    }
    if (language == Language.PYTHON) {
      return python().isPresent() ? Optional.empty()
          : Optional.of("no python3 that can import psycopg2 (Debian: apt-get install python3-psycopg2)");
    }
    if (!succeeds(List.of("node", "--version"))) {
      return Optional.of("no node on the PATH");
    }
    return Files.isRegularFile(clients.resolve("node/node_modules/pg/package.json")) ? Optional.empty()
        : Optional.of("pg is not installed in " + clients.resolve("node") + " (npm ci there)");
  }

  private static volatile Optional<String> python;

  /** The first python3 that imports psycopg2: Debian's package serves /usr/bin/python3, not a pyenv one. */
  private static Optional<String> python() {
    Optional<String> found = python;
    if (found == null) {
      found = Optional.empty();
      for (String candidate : List.of("/usr/bin/python3", "python3")) {
        if (succeeds(List.of(candidate, "-c", "import psycopg2"))) {
          found = Optional.of(candidate);
          break;
        }
      }
      python = found;
    }
    return found;
  }

  private static boolean succeeds(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return false;
      }
      return p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The repository's {@code clients/} directory, found from the working directory upwards. */
  private static Path clientsDirectory() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      Path clients = p.resolve("clients");
      if (Files.isRegularFile(clients.resolve("python/sql_api_client.py"))) {
        return clients;
      }
    }
    throw new IllegalStateException("no clients/ directory above " + Path.of("").toAbsolutePath());
  }

  /** libpq's variables for the test database, which psycopg2 and pg both read. */
  private static Map<String, String> connectionEnvironment(String applicationName) {
    TestDatabase db = TestDatabase.get();
    URI uri = URI.create(db.jdbcUrl().substring("jdbc:".length()));
    Map<String, String> env = new java.util.HashMap<>();
    env.put("PGHOST", uri.getHost());
    env.put("PGPORT", Integer.toString(uri.getPort() == -1 ? 5432 : uri.getPort()));
    env.put("PGDATABASE", uri.getPath().substring(1));
    env.put("PGAPPNAME", applicationName);
    String user = db.user();
    String password = db.password();
    if (uri.getQuery() != null) {
      for (String kv : uri.getQuery().split("&")) {
        String[] p = kv.split("=", 2);
        if (p.length == 2 && p[0].equals("user") && user == null) {
          user = p[1];
        } else if (p.length == 2 && p[0].equals("password") && password == null) {
          password = p[1];
        }
      }
    }
    if (user != null) {
      env.put("PGUSER", user);
    }
    if (password != null) {
      env.put("PGPASSWORD", password);
    }
    return env;
  }
}
