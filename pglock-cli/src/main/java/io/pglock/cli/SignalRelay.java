package io.pglock.cli;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Hands the signals pglock can catch (SIGTERM, SIGINT, SIGHUP) to a {@link CommandSupervisor}
 * instead of letting them end the JVM, and registers a shutdown hook for the exits that remain
 * (signal handlers that could not be installed, an unexpected {@code System.exit}). {@link #close()}
 * restores the previous handlers and removes the hook, so that running {@code pglock run}
 * in-process (the tests do) leaves the JVM as it found it.
 *
 * <p>Uses {@code sun.misc.Signal} from the {@code jdk.unsupported} module, the only way Java has to
 * catch a signal, present from JDK 9 through 25 at least. SIGQUIT stays the JVM's (thread dumps):
 * the JVM refuses to give it up. A signal that was ignored when pglock started (as {@code nohup}
 * ignores SIGHUP) stays ignored, and the command inherits that. Not thread-safe: install and close
 * from one thread.
 */
final class SignalRelay implements AutoCloseable {
  static final List<String> RELAYED = List.of("TERM", "INT", "HUP");

  private final Map<Signal, SignalHandler> previous = new LinkedHashMap<>();
  private final Thread hook;

  private SignalRelay(CommandSupervisor supervisor) {
    this.hook = new Thread(supervisor::jvmShutdown, "pglock-run-shutdown");
  }

  /** Installs the handlers and the hook; a handler the JVM will not give up is left to the hook. */
  static SignalRelay install(CommandSupervisor supervisor) {
    SignalRelay relay = new SignalRelay(supervisor);
    Runtime.getRuntime().addShutdownHook(relay.hook);
    for (String name : RELAYED) {
      try {
        Signal signal = new Signal(name);
        relay.previous.put(signal, Signal.handle(signal, s -> supervisor.signal(s.getName(), s.getNumber())));
      } catch (IllegalArgumentException | LinkageError e) {
        // Unknown here, reserved by the JVM (-Xrs), or no jdk.unsupported: the hook covers it.
      }
    }
    return relay;
  }

  @Override
  public void close() {
    previous.forEach(Signal::handle);
    previous.clear();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // The JVM is already shutting down: the hook runs, and finds the command ended.
    }
  }
}
