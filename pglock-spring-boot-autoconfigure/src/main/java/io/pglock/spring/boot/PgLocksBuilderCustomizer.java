package io.pglock.spring.boot;

import io.pglock.PgLocksBuilder;

/**
 * Adjusts the auto-configured {@link io.pglock.PgLocks} before it is built, after the
 * {@code pglock.*} properties were applied: a bean of this type is called for each option the
 * properties do not cover (a callback executor, a listener).
 */
@FunctionalInterface
public interface PgLocksBuilderCustomizer {
  /**
   * Adjusts the builder.
   *
   * @param builder the builder, with the properties applied; each option may still be set once
   */
  void customize(PgLocksBuilder builder);
}
