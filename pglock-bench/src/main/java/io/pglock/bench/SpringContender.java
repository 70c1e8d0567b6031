package io.pglock.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * A Spring Integration contender: a {@code LockRegistryLeaderInitiator} on a
 * {@code JdbcLockRegistry} whose {@code DefaultLockRepository} keeps its rows in
 * {@code <prefix>LOCK} (region: the election's name). Connections come from a HikariCP pool (what
 * Spring Boot configures) of 2, named {@code appName} in {@code application_name}, so that the
 * benchmark can terminate this node's backends. {@code ttlMs}, {@code heartbeatMs} and
 * {@code busyWaitMs} set the repository's time to live and the initiator's heartbeat and busy wait;
 * absent or 0, Spring's defaults apply (10 s, 500 ms, 50 ms). Leaving is {@code initiator.stop()},
 * which interrupts the leader's loop; the loop deletes the lock's row, then calls {@code onRevoked}.
 */
final class SpringContender implements ElectionContender {
  private final HikariDataSource pool;
  private final LockRegistryLeaderInitiator initiator;
  private final CountDownLatch revoked = new CountDownLatch(1);
  private volatile boolean leads;

  SpringContender(Map<String, String> opts) {
    this.pool = ChildDataSources.pool(opts, opts.get("appName"), 2);

    DataSource counted = CountingDataSource.wrap(pool);
    DefaultLockRepository repository = new DefaultLockRepository(counted);
    repository.setPrefix(opts.get("prefix"));
    repository.setRegion(opts.get("election"));
    long ttl = ContenderMain.longOpt(opts, "ttlMs");
    if (ttl > 0) {
      repository.setTimeToLive((int) ttl);
    }
    repository.setTransactionManager(new DataSourceTransactionManager(counted));
    repository.afterPropertiesSet();
    repository.afterSingletonsInstantiated();
    repository.start();

    DefaultCandidate candidate = new DefaultCandidate(opts.get("node"), opts.get("election")) {
      @Override
      public void onGranted(Context ctx) {
        leads = true;
        ContenderMain.out("ELECTED " + System.nanoTime());
      }

      @Override
      public void onRevoked(Context ctx) {
        leads = false;
        ContenderMain.out("REVOKED REVOKED " + System.nanoTime());
        revoked.countDown();
      }
    };
    this.initiator = new LockRegistryLeaderInitiator(new JdbcLockRegistry(repository), candidate);
    long heartbeat = ContenderMain.longOpt(opts, "heartbeatMs");
    long busyWait = ContenderMain.longOpt(opts, "busyWaitMs");
    if (heartbeat > 0) {
      initiator.setHeartBeatMillis(heartbeat);
    }
    if (busyWait > 0) {
      initiator.setBusyWaitMillis(busyWait);
    }
  }

  @Override
  public void stand() {
    initiator.start();
    // The initiator's thread tries the lock at once and then every idleBetweenTries (100 ms).
    ContenderMain.out("STANDING " + System.nanoTime());
  }

  @Override
  public void leave() throws InterruptedException {
    boolean wasLeader = leads;
    initiator.stop();
    // stop() only interrupts the loop; a leader's loop deletes its row and then calls onRevoked
    if (wasLeader && !revoked.await(10, TimeUnit.SECONDS)) {
      ContenderMain.out("ERROR no onRevoked within 10 s of stop()");
    }
  }

  @Override
  public boolean isLeader() {
    return initiator.getContext().isLeader();
  }

  @Override
  public void close() {
    initiator.stop();
    pool.close();
  }
}
