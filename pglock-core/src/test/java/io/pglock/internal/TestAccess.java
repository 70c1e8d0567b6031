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
    try (Connection c = o.connection(); Statement st = c.createStatement();
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
}
