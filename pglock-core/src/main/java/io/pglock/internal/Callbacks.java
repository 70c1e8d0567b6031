package io.pglock.internal;

import io.pglock.LossCause;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs user callbacks off pglock's own threads; an exception from one is logged, never propagated. */
final class Callbacks {
  private static final Logger log = LoggerFactory.getLogger(Callbacks.class);
  private final Executor executor;
  private final ExecutorService owned;

  Callbacks(Executor configured, String node) {
    if (configured != null) {
      executor = configured;
      owned = null;
    } else {
      owned = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "pglock-" + node + "-callbacks");
        t.setDaemon(true);
        return t;
      });
      executor = owned;
    }
  }

  void execute(Runnable task) {
    Runnable guarded = () -> {
      try {
        task.run();
      } catch (RuntimeException | Error e) {
        log.error("a pglock loss callback threw; it is ignored", e);
      }
    };
    if (owned != null && owned.isShutdown()) {
      guarded.run(); // the PgLocks is closed: signals still reach late listeners, on the caller
      return;
    }
    try {
      executor.execute(guarded);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      log.error("the callback executor refused a loss signal; running it on the caller", e);
      guarded.run();
    }
  }

  void run(Consumer<LossCause> callback, LossCause cause) {
    execute(() -> callback.accept(cause));
  }

  /** Stops pglock's own callback thread after the signals already queued. */
  void shutdown() {
    if (owned != null) {
      owned.shutdown();
    }
  }
}
