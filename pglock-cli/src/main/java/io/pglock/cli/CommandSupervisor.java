package io.pglock.cli;

import io.pglock.LockHandle;
import io.pglock.LossCause;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The command {@code pglock run} starts while it holds the lock, and everything that may end it:
 * its own exit, a signal to pglock (passed on), the loss of the lock (SIGTERM, then SIGKILL after
 * the grace period) and the JVM going down (the same). The lock is released only after the
 * command has ended, so that it never runs unprotected because of pglock; the exceptions are a
 * lost lock and a SIGKILL of pglock, which no process can prevent (see {@code docs/cli.md}).
 *
 * <p>Thread-safe: it is called by the main thread, by the JVM's signal threads, by pglock's loss
 * callback thread and by the shutdown hook.
 */
final class CommandSupervisor {
  private final Thread main;
  private final PrintWriter err;
  private final Duration grace;
  private final String lockName;
  private Process child; // guarded by this
  private CaughtSignal pendingSignal; // guarded by this; a signal that came before the command started
  private LossCause lost; // guarded by this

  /** A signal pglock caught, by name ({@code TERM}) and number. */
  record CaughtSignal(String name, int number) {
    int exitCode() {
      return ExitCodes.SIGNAL_BASE + number;
    }
  }

  /**
   * A supervisor for a command run from the {@code main} thread, which is interrupted if a signal
   * comes while it waits for the lock.
   */
  CommandSupervisor(Thread main, PrintWriter err, Duration grace, String lockName) {
    this.main = main;
    this.err = err;
    this.grace = grace;
    this.lockName = lockName;
  }

  /**
   * Starts the command, unless a signal or the loss of the lock came first, and waits for it to
   * end; an interrupt does not stop the wait, since the lock must outlive the command.
   *
   * @return the command's exit status (128 + N when a signal N ended it), or the code that says
   *     why it did not start or that the lock was lost while it ran
   */
  int run(ProcessBuilder command, LockHandle handle) {
    Process p;
    synchronized (this) {
      if (pendingSignal != null) {
        return notStarted();
      }
      if (lost != null) {
        report("lost the lock " + lockName + " (" + lost + ") before the command started; it was not started");
        return ExitCodes.LOCK_LOST;
      }
      try {
        p = command.start();
      } catch (IOException e) {
        return cannotStart(command, e);
      }
      child = p;
    }
    int status = awaitUninterruptibly(p);
    // Read before anything else: held now means held for the whole run, since a lost lock never comes back.
    boolean heldThroughout = handle.isHeld();
    LossCause cause;
    synchronized (this) {
      cause = lost;
    }
    if (heldThroughout && cause == null) {
      return status;
    }
    report("the command ended with status " + status + " after the lock " + lockName + " was lost ("
        + (cause != null ? cause : handle.state()) + "); exit code " + ExitCodes.LOCK_LOST);
    return ExitCodes.LOCK_LOST;
  }

  /**
   * A signal to pglock: passed on to the command if it runs; before it starts, it stops the wait
   * for the lock (the main thread is interrupted) and the command is not started.
   */
  void signal(String name, int number) {
    Process p;
    synchronized (this) {
      p = child;
      if (p == null) {
        if (pendingSignal == null) {
          pendingSignal = new CaughtSignal(name, number);
        }
        main.interrupt();
        return;
      }
    }
    if (p.isAlive()) {
      report("passing SIG" + name + " to the command (pid " + p.pid() + "); the lock is held until it ends");
      forward(p, name);
    }
  }

  /** The signal that stopped pglock before the command started, or null. */
  synchronized CaughtSignal pendingSignal() {
    return pendingSignal;
  }

  /** The exit code for a signal that came before the command started: 128 + N, as shells report. */
  synchronized int notStarted() {
    report("SIG" + pendingSignal.name() + " before the command started; it was not started");
    return pendingSignal.exitCode();
  }

  /** The lock was lost: the command is told with SIGTERM, then SIGKILL after the grace period. */
  void lost(LossCause cause) {
    Process p;
    synchronized (this) {
      if (lost != null) {
        return;
      }
      lost = cause;
      p = child;
    }
    // Not started yet: run() sees the loss and does not start it. Already ended: run() reports it.
    if (p != null && p.isAlive()) {
      report("lost the lock " + lockName + " (" + cause + ") while the command ran; sending SIGTERM to it (pid "
          + p.pid() + "), SIGKILL in " + DurationConverter.format(grace) + " if it has not ended");
      terminate(p, true);
    }
  }

  /**
   * The JVM is going down (only when pglock's signal handlers could not be installed, or on an
   * unexpected exit): ends the command the way a loss does and waits for it, so that the lock,
   * which the server frees when this process's connections close, outlives it.
   */
  void jvmShutdown() {
    Process p;
    synchronized (this) {
      p = child;
    }
    if (p != null && p.isAlive()) {
      report("pglock is shutting down; sending SIGTERM to the command (pid " + p.pid() + ")");
      terminate(p, false);
      awaitUninterruptibly(p);
    }
  }

  private void terminate(Process p, boolean inBackground) {
    p.destroy(); // SIGTERM on Unix
    Runnable killer = () -> {
      try {
        if (!p.waitFor(grace.toNanos(), TimeUnit.NANOSECONDS)) {
          report("the command (pid " + p.pid() + ") did not end within " + DurationConverter.format(grace)
              + " of SIGTERM; sending SIGKILL");
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    };
    if (inBackground) {
      // Not on pglock's callback thread, which other loss callbacks share.
      Thread t = new Thread(killer, "pglock-run-terminator");
      t.setDaemon(true);
      t.start();
    } else {
      killer.run();
    }
  }

  private void forward(Process p, String signal) {
    if (signal.equals("TERM")) {
      p.destroy();
      return;
    }
    // The JDK sends only SIGTERM and SIGKILL; kill(1) sends the rest.
    try {
      Process kill = new ProcessBuilder("kill", "-s", signal, Long.toString(p.pid()))
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        kill.destroyForcibly();
        report("could not pass SIG" + signal + " to the command (pid " + p.pid() + "): kill failed");
      }
    } catch (IOException e) {
      report("could not pass SIG" + signal + " to the command (pid " + p.pid() + "): " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private int cannotStart(ProcessBuilder command, IOException e) {
    // The JDK's message carries the OS error: "error=2, No such file or directory" (JDK 17), or
    // "Exec failed, error: 2 (No such file or directory)" (JDK 25). errno 2 is ENOENT: not found.
    String message = String.valueOf(e.getMessage());
    boolean notFound = java.util.regex.Pattern.compile("error(=|: )2\\b").matcher(message).find();
    report("cannot run " + command.command().get(0) + ": "
        + message.replaceFirst("^Cannot run program \"[^\"]*\"[^:]*: ", "").replaceFirst("^error=\\d+, ", "")
            .replaceFirst("^Exec failed, error: \\d+ \\((.*)\\)\\s*$", "$1").trim());
    return notFound ? ExitCodes.NOT_FOUND : ExitCodes.CANNOT_EXECUTE;
  }

  private static int awaitUninterruptibly(Process p) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return p.waitFor();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void report(String line) {
    synchronized (err) {
      err.println("pglock run: " + line);
      err.flush();
    }
  }
}
