package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.fault.TcpProxy;
import io.pglock.testing.NoLeakedLocks;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link PgLocks#leaseMargin()}: near the lease while round trips come back, falling when they stop. */
@ExtendWith(NoLeakedLocks.class)
class LeaseMarginTest extends PgLocksTestSupport {

  @Test
  void theMarginStaysNearTheLeaseAndFallsWhenRoundTripsStop() throws Exception {
    TcpProxy proxy = proxyToDb();
    Duration lease = Duration.ofSeconds(3);
    PgLocks locks = track(PgLocks.builder(through(proxy, "lease-margin")).namespace("test").lease(lease).build());
    assertThat(locks.leaseMargin()).as("the first lock session is open").isPresent();
    assertThat(locks.leaseMargin().get()).isPositive().isLessThanOrEqualTo(lease);

    proxy.freeze(); // round trips stop coming back: heartbeats no longer renew the lease
    Duration before = locks.leaseMargin().orElseThrow();
    await("the margin falls below a second", Duration.ofSeconds(30),
        () -> locks.leaseMargin().map(m -> m.compareTo(Duration.ofSeconds(1)) < 0).orElse(true));
    assertThat(locks.leaseMargin().map(m -> m.compareTo(before) < 0).orElse(true)).isTrue();
    proxy.thaw();
    locks.close();
    assertThat(locks.leaseMargin()).as("no session after close").isEmpty();
  }

  @Test
  void noMarginWithoutLockSessions() {
    PgLocks locks = track(builder().transactionLocksOnly().build());
    assertThat(locks.leaseMargin()).isEmpty();
  }
}
