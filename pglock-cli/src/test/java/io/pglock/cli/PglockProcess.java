package io.pglock.cli;

import io.pglock.testing.TestDatabase;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The {@code pglock} command in a JVM of its own, as an operator runs it: connected to the test
 * database through {@code PGLOCK_URL}, {@code PGLOCK_USER} and {@code PGLOCK_PASSWORD}, its output
 * (and the command's, which it inherits) collected. {@link #close()} kills it (SIGKILL).
 */
final class PglockProcess implements AutoCloseable {
  private final Process process;
  private final StringBuffer out = new StringBuffer();
  private final StringBuffer err = new StringBuffer();

  private PglockProcess(Process process) {
    this.process = process;
    pump(process.getInputStream(), out, "stdout");
    pump(process.getErrorStream(), err, "stderr");
  }

  /** Starts {@code pglock args...}. */
  static PglockProcess start(String... args) throws IOException {
    TestDatabase db = TestDatabase.get();
    List<String> command = new ArrayList<>(List.of(
        System.getProperty("java.home") + File.separator + "bin" + File.separator + "java",
        "-Xmx64m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", classPath(),
        PglockCommand.class.getName()));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> env = pb.environment();
    env.put("PGLOCK_URL", db.jdbcUrl());
    putOrRemove(env, "PGLOCK_USER", db.user());
    putOrRemove(env, "PGLOCK_PASSWORD", db.password());
    return new PglockProcess(pb.start());
  }

  /** Surefire's test class path when set (our own may be a manifest-only jar), else ours. */
  private static String classPath() {
    String cp = System.getProperty("surefire.test.class.path");
    return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
  }

  private static void putOrRemove(Map<String, String> env, String name, String value) {
    if (value != null) {
      env.put(name, value);
    } else {
      env.remove(name);
    }
  }

  private static void pump(InputStream in, StringBuffer into, String what) {
    Thread t = new Thread(() -> {
      try (in) {
        byte[] buf = new byte[4096];
        for (int n; (n = in.read(buf)) > 0; ) {
          into.append(new String(buf, 0, n, StandardCharsets.UTF_8));
        }
      } catch (IOException e) {
        // the process ended
      }
    }, "pglock-process-" + what);
    t.setDaemon(true);
    t.start();
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** Sends a signal by name ({@code TERM}, {@code HUP}) with kill(1). */
  void signal(String name) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", "-s", name, Long.toString(pid())).redirectErrorStream(true).start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      kill.destroyForcibly();
      throw new AssertionError("kill -s " + name + " " + pid() + " failed");
    }
  }

  /** SIGKILL, without waiting. */
  void kill() {
    process.destroyForcibly();
  }

  /** Waits for the exit. @return the exit code */
  int awaitExit(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("pglock still runs after " + timeout + "; " + output());
    }
    return process.exitValue();
  }

  String stderr() {
    return err.toString();
  }

  String output() {
    return "stdout:\n" + out + "\nstderr:\n" + err;
  }

  /**
   * Waits for a condition with a deadline ({@link io.pglock.testing.Await}).
   *
   * @throws AssertionError with this process's output if the timeout passes, or if pglock exits first
   */
  void await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
    try {
      io.pglock.testing.Await.until(what, timeout, () -> condition.getAsBoolean() || !process.isAlive());
    } catch (AssertionError e) {
      throw new AssertionError("no " + what + " within " + timeout + "; " + output(), e);
    }
    if (!condition.getAsBoolean()) {
      throw new AssertionError("pglock exited with " + process.exitValue() + " before " + what + "; " + output());
    }
  }

  /** Waits for a file to exist and be non-empty, and returns its first line. */
  String awaitFile(Path file, Duration timeout) throws InterruptedException {
    await(file.getFileName() + " written", timeout, () -> {
      try {
        return Files.exists(file) && Files.readString(file).endsWith("\n");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
    try {
      return Files.readAllLines(file).get(0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      throw new AssertionError("pglock (pid " + pid() + ") survived SIGKILL for 10 s");
    }
  }
}
