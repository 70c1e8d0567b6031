package io.pglock.bench;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * A Curator contender: a {@code CuratorFramework} on ZooKeeper {@code connect} and a
 * {@code LeaderLatch} on path {@code /pglock-bench/<election>}. {@code sessionMs} and
 * {@code connectionMs} set the client's session and connection timeouts; absent or 0, Curator's
 * defaults apply (60 s and 15 s; the server caps the session at its {@code maxSessionTimeout}).
 * The retry policy is the one Curator's documentation shows, {@code ExponentialBackoffRetry(1000, 3)}.
 * Leaving is {@code latch.close()} (whose default close mode calls no listener), then the client's.
 */
final class CuratorContender implements ElectionContender {
  private final CuratorFramework client;
  private final LeaderLatch latch;

  CuratorContender(Map<String, String> opts) {
    CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder().connectString(opts.get("connect"))
        .retryPolicy(new ExponentialBackoffRetry(1000, 3));
    long session = ContenderMain.longOpt(opts, "sessionMs");
    long connection = ContenderMain.longOpt(opts, "connectionMs");
    if (session > 0) {
      b.sessionTimeoutMs((int) session);
    }
    if (connection > 0) {
      b.connectionTimeoutMs((int) connection);
    }
    this.client = b.build();
    this.latch = new LeaderLatch(client, "/pglock-bench/" + opts.get("election"), opts.get("node"));
    latch.addListener(new LeaderLatchListener() {
      @Override
      public void isLeader() {
        ContenderMain.out("ELECTED " + System.nanoTime());
      }

      @Override
      public void notLeader() {
        ContenderMain.out("REVOKED NOT_LEADER " + System.nanoTime());
      }
    });
  }

  @Override
  public void stand() throws Exception {
    client.start();
    if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("ZooKeeper not reached within 30 s");
    }
    ContenderMain.out("INFO session timeout negotiated "
        + client.getZookeeperClient().getZooKeeper().getSessionTimeout() + " ms");
    latch.start();
    // Standing once the latch's own node exists: from then on the node is in line.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (latch.getOurPath() == null) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("LeaderLatch created no node within 30 s");
      }
      java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
    }
    ContenderMain.out("STANDING " + System.nanoTime());
  }

  @Override
  public void leave() throws Exception {
    latch.close();
    client.close();
  }

  @Override
  public boolean isLeader() {
    return latch.hasLeadership();
  }

  @Override
  public void close() {
    try {
      latch.close();
    } catch (Exception | AssertionError e) {
      // already closed by leave()
    }
    client.close();
  }
}
