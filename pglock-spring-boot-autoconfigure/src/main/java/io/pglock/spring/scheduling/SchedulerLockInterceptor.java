package io.pglock.spring.scheduling;

import io.pglock.LockHandle;
import io.pglock.PgLocks;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationAttributes;

/**
 * Runs a {@link SchedulerLock} method under its lock: try once, skip the call if another node
 * holds it, release when the call returns or, with {@code lockAtLeastFor}, that long after it
 * started (the hold is then ended by a timer; every such hold is released when the context closes).
 */
final class SchedulerLockInterceptor implements MethodInterceptor {
  private static final Logger log = LoggerFactory.getLogger(SchedulerLockInterceptor.class);
  /** ShedLock's annotation, honoured as pglock's when shedlock-spring is on the class path. */
  static final String SHEDLOCK_ANNOTATION = "net.javacrumbs.shedlock.spring.annotation.SchedulerLock";
  private final ObjectProvider<PgLocks> locks;
  private final UnaryOperator<String> resolver;
  private final Map<Method, Settings> settings = new ConcurrentHashMap<>();
  private final Map<LockHandle, ScheduledFuture<?>> lingering = new ConcurrentHashMap<>();
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "pglock-scheduler-lock-release");
    t.setDaemon(true);
    return t;
  });

  private record Settings(String name, Duration atLeast) {}

  SchedulerLockInterceptor(ObjectProvider<PgLocks> locks, UnaryOperator<String> resolver) {
    this.locks = locks;
    this.resolver = resolver;
  }

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Settings s = settings.computeIfAbsent(invocation.getMethod(), this::settings);
    long start = System.nanoTime();
    Optional<LockHandle> held = locks.getObject().lock(s.name()).tryAcquire();
    if (held.isEmpty()) {
      log.debug("{} skipped: lock \"{}\" is held by another node", invocation.getMethod().getName(), s.name());
      return null;
    }
    LockHandle handle = held.get();
    try {
      return invocation.proceed();
    } finally {
      long left = s.atLeast().toNanos() - (System.nanoTime() - start);
      if (left <= 0) {
        handle.close();
      } else {
        linger(handle, left);
      }
    }
  }

  private void linger(LockHandle handle, long nanos) {
    try {
      lingering.put(handle, timer.schedule(() -> {
        lingering.remove(handle);
        handle.close();
      }, nanos, TimeUnit.NANOSECONDS));
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      handle.close();
    }
  }

  private Settings settings(Method method) {
    AnnotationAttributes a = AnnotatedElementUtils.findMergedAnnotationAttributes(method, SchedulerLock.class, false, false);
    if (a == null) {
      a = AnnotatedElementUtils.findMergedAnnotationAttributes(method, SHEDLOCK_ANNOTATION, false, false);
    }
    if (a == null) {
      throw new IllegalStateException("no @SchedulerLock on " + method);
    }
    String name = resolver.apply(a.getString("name"));
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("@SchedulerLock on " + method + " needs a name: the lock every node takes");
    }
    Durations.parse(resolver.apply(a.getString("lockAtMostFor")), "lockAtMostFor", method); // checked, not needed
    Duration atLeast = Durations.parse(resolver.apply(a.getString("lockAtLeastFor")), "lockAtLeastFor", method);
    return new Settings(name, atLeast == null ? Duration.ZERO : atLeast);
  }

  /** Releases every lock kept for {@code lockAtLeastFor}: the context is closing. */
  void close() {
    timer.shutdownNow();
    for (LockHandle h : lingering.keySet()) {
      h.close();
    }
    lingering.clear();
  }
}
