package io.pglock.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.pglock.PgLocks;
import io.pglock.spring.integration.PgLockRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * A Spring Integration contender: a {@code LockRegistryLeaderInitiator} on one of two registries.
 * {@code registry=jdbc} (the default): a {@code JdbcLockRegistry} whose {@code DefaultLockRepository}
 * keeps its rows in {@code <prefix>LOCK} (region: the election's name); {@code ttlMs} sets the
 * repository's time to live (absent or 0: Spring's 10 s). {@code registry=pglock}: pglock's
 * {@code PgLockRegistry} (region: the election's name) on a {@code PgLocks} of node {@code node},
 * namespace {@code namespace} and lease {@code leaseMs}, pglock's defaults otherwise (one lock session,
 * two wait sessions). Connections come from a HikariCP pool (what Spring Boot configures) named
 * {@code appName} in {@code application_name}, so that the benchmark can terminate this node's
 * backends: of 2 for JDBC, which uses one connection at a time, and of 3 for pglock, whose lock
 * session and two wait sessions keep theirs borrowed (pglock renames them
 * {@code pglock:<node>:<role>:<namespace>}). {@code heartbeatMs} and {@code busyWaitMs} set the
 * initiator's heartbeat and busy wait; absent or 0, Spring's defaults apply (500 ms, 50 ms). Leaving
 * is {@code initiator.stop()}, which interrupts the leader's loop; the loop unlocks (JDBC: deletes the
 * lock's row; pglock: releases the advisory lock), then calls {@code onRevoked}.
 */
final class SpringContender implements ElectionContender {
  private final HikariDataSource pool;
  /** pglock's instance under {@code registry=pglock}, else null. */
  private final PgLocks pgLocks;
  private final LockRegistryLeaderInitiator initiator;
  private final CountDownLatch revoked = new CountDownLatch(1);
  private volatile boolean leads;

  SpringContender(Map<String, String> opts) {
    boolean onPglock = opts.getOrDefault("registry", "jdbc").equals("pglock");
    this.pool = ChildDataSources.pool(opts, opts.get("appName"), onPglock ? 3 : 2);
    DataSource counted = CountingDataSource.wrap(pool);
    LockRegistry registry;
    if (onPglock) {
      pgLocks = PgLocks.builder(counted).namespace(opts.get("namespace")).nodeName(opts.get("node"))
          .lease(Duration.ofMillis(Long.parseLong(opts.get("leaseMs")))).build();
      registry = new PgLockRegistry(pgLocks, opts.get("election"));
    } else {
      pgLocks = null;
      registry = new JdbcLockRegistry(jdbcRepository(opts, counted));
    }

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
    this.initiator = new LockRegistryLeaderInitiator(registry, candidate);
    long heartbeat = ContenderMain.longOpt(opts, "heartbeatMs");
    long busyWait = ContenderMain.longOpt(opts, "busyWaitMs");
    if (heartbeat > 0) {
      initiator.setHeartBeatMillis(heartbeat);
    }
    if (busyWait > 0) {
      initiator.setBusyWaitMillis(busyWait);
    }
  }

  private static DefaultLockRepository jdbcRepository(Map<String, String> opts, DataSource counted) {
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
    return repository;
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
    if (pgLocks != null) {
      pgLocks.close();
    }
    pool.close();
  }
}
