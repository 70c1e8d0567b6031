package io.pglock.spring.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.pglock.PgLocks;
import io.pglock.PgLocksBuilder;
import io.pglock.micrometer.PgLocksMetrics;
import io.pglock.spring.boot.PgLocksBuilderCustomizer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Binds pglock's lock meters ({@code pglock.locks.*}, {@code pglock.election.leader}) to the
 * application's {@link MeterRegistry}, if it has one: registers the listener on the builder, then
 * the gauges once {@link PgLocks} exists. The registry is looked up when {@code PgLocks} is built,
 * so the order of auto-configurations does not matter.
 */
public final class PgLockMeterBinder implements PgLocksBuilderCustomizer, SmartInitializingSingleton {
  private final ObjectProvider<MeterRegistry> registry;
  private final ObjectProvider<PgLocks> locks;
  private volatile PgLocksMetrics metrics;

  /**
   * Creates the binder.
   *
   * @param registry the application's registry, if any
   * @param locks the node's instance
   */
  public PgLockMeterBinder(ObjectProvider<MeterRegistry> registry, ObjectProvider<PgLocks> locks) {
    this.registry = registry;
    this.locks = locks;
  }

  @Override
  public void customize(PgLocksBuilder builder) {
    MeterRegistry r = registry.getIfAvailable();
    if (r != null) {
      metrics = new PgLocksMetrics(r);
      builder.listener(metrics);
    }
  }

  @Override
  public void afterSingletonsInstantiated() {
    PgLocksMetrics m = metrics;
    PgLocks pg = locks.getIfAvailable();
    if (m != null && pg != null) {
      m.bind(pg);
    }
  }
}
