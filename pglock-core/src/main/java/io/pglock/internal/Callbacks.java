package io.pglock.internal;

import io.pglock.LossCause;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs user callbacks off pglock's own threads; an exception from one is logged, never propagated.
 *
 * <p>Callbacks never run on a session loop or the watchdog, where a blocking callback would stall
 * lease checks for every session: when the configured executor refuses a task (shut down,
 * saturated), or after {@code PgLocks.close()} stopped pglock's own callback thread, the task goes to
 * a fallback thread that pglock owns, which runs tasks in order and ends when idle.
 */
final class Callbacks {
  private static final Logger log = LoggerFactory.getLogger(Callbacks.class);
  private final Executor executor;
  private final ExecutorService owned;
  private final ThreadPoolExecutor fallback;

  Callbacks(Executor configured, String node) {
    if (configured != null) {
      executor = configured;
      owned = null;
    } else {
      owned = singleThread("pglock-" + node + "-callbacks", false);
      executor = owned;
    }
    fallback = singleThread("pglock-" + node + "-callbacks-fallback", true);
  }

  private static ThreadPoolExecutor singleThread(String name, boolean endWhenIdle) {
    ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    });
    pool.allowCoreThreadTimeOut(endWhenIdle);
    return pool;
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
      fallback.execute(guarded); // the PgLocks is closed: signals still reach late listeners
      return;
    }
    try {
      executor.execute(guarded);
    } catch (RejectedExecutionException e) {
      log.warn("the callback executor refused a loss signal ({}); running it on pglock's fallback callback thread",
          e.toString());
      fallback.execute(guarded);
    }
  }

  void run(Consumer<LossCause> callback, LossCause cause) {
    execute(() -> callback.accept(cause));
  }

  /**
   * Stops pglock's own callback thread after the signals already queued. The fallback thread stays
   * available for signals that arrive later (it ends by itself when idle).
   */
  void shutdown() {
    if (owned != null) {
      owned.shutdown();
    }
  }
}
