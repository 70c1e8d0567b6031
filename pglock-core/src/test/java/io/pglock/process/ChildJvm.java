package io.pglock.process;

import io.pglock.testing.TestDatabase;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@link LockHolderProcess} in its own JVM, seen from the test: its stdout lines (read by a
 * thread as they come), stdin commands, Unix signals and a forced end. Close it in a
 * {@code finally} or {@code @AfterEach}: {@link #close()} kills the process (SIGKILL).
 */
public final class ChildJvm implements AutoCloseable {
  private final String label;
  private final Process process;
  private final Writer stdin;
  private final List<String> lines = new ArrayList<>(); // guarded by this
  private final StringBuilder stderr = new StringBuilder(); // guarded by itself

  private ChildJvm(String label, Process process) {
    this.label = label;
    this.process = process;
    this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    Thread out = new Thread(() -> pump(process.getInputStream(), true), "child-" + label + "-stdout");
    Thread err = new Thread(() -> pump(process.getErrorStream(), false), "child-" + label + "-stderr");
    out.setDaemon(true);
    err.setDaemon(true);
    out.start();
    err.start();
  }

  /**
   * How a child is started: the words before {@code java} on its command line (none, or
   * {@code ip netns exec <namespace>}, which execs, so the child keeps the pid this class knows), and
   * the database it is given.
   *
   * @param prefix words run before {@code java}; empty for none
   * @param url the JDBC URL passed as option {@code url}
   * @param user passed as option {@code user} (null: none)
   * @param password passed in the environment (null: none)
   */
  public record Launch(List<String> prefix, String url, String user, String password) {
    public Launch {
      prefix = List.copyOf(prefix);
    }

    /** {@return a plain child of the test database (URL, user and password of {@link TestDatabase})} */
    public static Launch testDatabase() {
      TestDatabase db = TestDatabase.get();
      return new Launch(List.of(), db.jdbcUrl(), db.user(), db.password());
    }
  }

  /**
   * Starts {@link LockHolderProcess} with the mode and options, adding the test database's URL,
   * user and password (in the environment).
   */
  public static ChildJvm start(String label, String mode, String... options) throws IOException {
    return start(Launch.testDatabase(), label, mode, options);
  }

  /**
   * Starts {@link LockHolderProcess} as the launch says, with the mode and options, adding the
   * launch's URL, user and password (in the environment).
   */
  public static ChildJvm start(Launch launch, String label, String mode, String... options) throws IOException {
    List<String> command = new ArrayList<>(launch.prefix());
    command.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
    command.add("-Xmx128m");
    command.add("-XX:TieredStopAtLevel=1"); // starts faster; the children do little work
    command.add("-XX:+UseSerialGC");
    command.add("-Dorg.slf4j.simpleLogger.showDateTime=true");
    command.add("-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS");
    command.add("-cp");
    command.add(testClassPath());
    command.add(LockHolderProcess.class.getName());
    command.add(mode);
    command.add("url=" + launch.url());
    command.add("user=" + (launch.user() == null ? "" : launch.user()));
    command.addAll(List.of(options));
    ProcessBuilder pb = new ProcessBuilder(command);
    if (launch.password() != null) {
      pb.environment().put("PGLOCK_CHILD_PASSWORD", launch.password()); // not on the command line
    }
    Process p = pb.start();
    return new ChildJvm(label, p);
  }

  /**
   * The class path of this test run: surefire's {@code surefire.test.class.path} when it is set
   * (the forked JVM's own {@code java.class.path} may be a manifest-only jar), else ours.
   */
  static String testClassPath() {
    String cp = System.getProperty("surefire.test.class.path");
    return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
  }

  private void pump(InputStream in, boolean isStdout) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        System.out.println("[" + label + (isStdout ? "] " : " stderr] ") + line);
        if (isStdout) {
          synchronized (this) {
            lines.add(line);
            notifyAll();
          }
        } else {
          synchronized (stderr) {
            stderr.append(line).append('\n');
          }
        }
      }
    } catch (IOException e) {
      // the process ended
    }
  }

  /** The process id. */
  public long pid() {
    return process.pid();
  }

  /**
   * Waits for the first stdout line whose first word is the keyword.
   *
   * @throws AssertionError with the child's output if the timeout passes or the child ends first
   */
  public String awaitLine(String keyword, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (this) {
      while (true) {
        for (String line : lines) {
          if (line.equals(keyword) || line.startsWith(keyword + " ")) {
            return line;
          }
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("child " + label + " printed no " + keyword + " line within " + timeout
              + (process.isAlive() ? "" : " (it exited with " + process.exitValue() + ")") + "; " + output());
        }
        TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
      }
    }
  }

  /**
   * Waits for the first stdout line, after the first {@code skip} lines, whose first word is one of
   * the keywords.
   *
   * @param skip how many lines to pass over (those already seen: {@link #lineCount()} before a command)
   * @throws AssertionError with the child's output if the timeout passes or the child ends first
   */
  public String awaitAnyLine(int skip, Duration timeout, String... keywords) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (this) {
      while (true) {
        for (String line : lines.subList(Math.min(skip, lines.size()), lines.size())) {
          for (String keyword : keywords) {
            if (line.equals(keyword) || line.startsWith(keyword + " ")) {
              return line;
            }
          }
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("child " + label + " printed no " + String.join("/", keywords) + " line within "
              + timeout + (process.isAlive() ? "" : " (it exited with " + process.exitValue() + ")") + "; " + output());
        }
        TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
      }
    }
  }

  /** {@return how many stdout lines the child has printed so far} */
  public synchronized int lineCount() {
    return lines.size();
  }

  /** {@return every stdout line so far} */
  public synchronized List<String> lines() {
    return new ArrayList<>(lines);
  }

  /** Every stdout line so far whose first word is the keyword. */
  public synchronized List<String> linesStarting(String keyword) {
    List<String> found = new ArrayList<>();
    for (String line : lines) {
      if (line.equals(keyword) || line.startsWith(keyword + " ")) {
        found.add(line);
      }
    }
    return found;
  }

  /** The last stdout line so far whose first word is the keyword; fails if there is none. */
  public synchronized String lastLineStarting(String keyword) {
    List<String> found = linesStarting(keyword);
    if (found.isEmpty()) {
      throw new AssertionError("no line starting with " + keyword + " from " + this);
    }
    return found.get(found.size() - 1);
  }

  /** Writes a command line to the child's stdin. */
  public void send(String command) throws IOException {
    stdin.write(command + "\n");
    stdin.flush();
  }

  /** Sends a Unix signal ({@code "STOP"}, {@code "CONT"}, ...) with {@code kill} and waits for it to be sent. */
  public void signal(String signal) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).redirectErrorStream(true).start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      kill.destroyForcibly();
      throw new AssertionError("kill -" + signal + " " + pid() + " failed: "
          + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }
  }

  /** Sends SIGKILL ({@link Process#destroyForcibly()} on Linux). Does not wait. */
  public void kill() {
    process.destroyForcibly();
  }

  /** Waits for the process to end. @return its exit code */
  public int awaitExit(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("child " + label + " still runs after " + timeout + "; " + output());
    }
    return process.exitValue();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** The child's stdout and stderr so far, for failure messages. */
  public String output() {
    String out;
    synchronized (this) {
      out = String.join("\n", lines);
    }
    String err;
    synchronized (stderr) {
      err = stderr.toString();
    }
    return "stdout of " + label + ":\n" + out + "\nstderr of " + label + ":\n" + err;
  }

  /** Kills the process (SIGKILL, which also ends a stopped process) and waits for it to go. */
  @Override
  public void close() {
    process.destroyForcibly();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        throw new AssertionError("child " + label + " (pid " + pid() + ") survived SIGKILL for 10 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "ChildJvm[" + label + ", pid " + pid() + (process.isAlive() ? "" : ", exited") + "]";
  }
}
