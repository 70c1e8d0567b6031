package io.pglock.internal;

import io.pglock.LockHandle;
import io.pglock.PgLocksConfig;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.function.LongSupplier;

/**
 * Test-only access to engine state that the public API does not expose. Lives in test sources, in
 * the engine's package, so that production code carries no test hook.
 */
public final class TestAccess {
  private TestAccess() {}

  /**
   * The lease deadline ({@link System#nanoTime()} scale) of the lock session that carries the
   * handle's lock now, read on each call from that session (also after the session died, when it
   * is the deadline the session ended with).
   *
   * @throws IllegalStateException if the handle's lock is not on a session (released or lost)
   */
  public static LongSupplier leaseDeadline(LockHandle handle) {
    LockSession session = ((DefaultLockHandle) handle).state.session;
    if (session == null) {
      throw new IllegalStateException("the lock of " + handle + " is on no session");
    }
    return session::leaseDeadline;
  }

  /** @return {idle_session_timeout, keepalive detection (idle + count * interval), tcp_user_timeout} in ms */
  public static long[] serverTimersMillis(PgLocksConfig config) throws Exception {
    SessionSetup.Opened o = SessionSetup.open(config, "pglock-test-probe");
    try (Connection c = o.connection().connection; Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("""
            SELECT (SELECT setting::bigint FROM pg_settings WHERE name = 'idle_session_timeout'),
                   (SELECT setting::bigint FROM pg_settings WHERE name = 'tcp_keepalives_idle') * 1000
                   + (SELECT setting::bigint FROM pg_settings WHERE name = 'tcp_keepalives_count')
                   * (SELECT setting::bigint FROM pg_settings WHERE name = 'tcp_keepalives_interval') * 1000,
                   (SELECT setting::bigint FROM pg_settings WHERE name = 'tcp_user_timeout')""")) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
    }
  }

  /** Clocks a test moves by hand: the monotonic one follows the JVM's, the wall clock can jump. */
  public static final class JumpingClock implements LeaseClock {
    private volatile long wallOffsetMillis;
    private volatile long nanoOffset;

    /** Moves the wall clock only, as a suspend of the VM does (the monotonic clock stood still). */
    public void suspendFor(java.time.Duration d) {
      wallOffsetMillis += d.toMillis();
    }

    /** Moves the monotonic clock only. */
    public void advanceMonotonic(java.time.Duration d) {
      nanoOffset += d.toNanos();
    }

    @Override
    public long nanoTime() {
      return System.nanoTime() + nanoOffset;
    }

    @Override
    public long wallMillis() {
      return System.currentTimeMillis() + wallOffsetMillis;
    }
  }

  /** Starts a PgLocks with the builder's settings whose lease reads the given clocks. */
  public static io.pglock.PgLocks start(io.pglock.PgLocksBuilder builder, JumpingClock clock) {
    PgLocksConfig config;
    try (io.pglock.PgLocks probe = builder.build()) {
      config = probe.config();
    }
    return DefaultPgLocks.start(config, clock);
  }

  /** The index (0-based) of the lock session that carries the key, out of {@code sessions}. */
  public static int sessionIndex(io.pglock.LockKey key, int sessions) {
    return Sessions.indexOf(ServerKey.of(key), sessions);
  }
}
