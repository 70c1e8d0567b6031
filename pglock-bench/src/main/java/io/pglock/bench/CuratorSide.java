package io.pglock.bench;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Curator's LeaderLatch in B8, on the benchmark's own ZooKeeper. Default: Curator's default session
 * (60 s requested, capped by the server at 20 ticks) and connection (15 s) timeouts. Tuned: session
 * and connection timeouts equal to pglock's bench lease. A dead or paused leader's latch node is an
 * ephemeral node, deleted when the server expires the session: failover takes the session timeout.
 * The parent sees the standbys in line as the latch's children in ZooKeeper (one per contender).
 */
final class CuratorSide implements ElectionSide {
  private final LocalZooKeeper zk;
  private final Duration requestedSession;
  private final CuratorFramework observer;

  /**
   * @param requestedSession the session timeout to ask for, or null for Curator's default
   */
  CuratorSide(LocalZooKeeper zk, Duration requestedSession) throws InterruptedException {
    this.zk = zk;
    this.requestedSession = requestedSession;
    this.observer = CuratorFrameworkFactory.newClient(zk.connectString(), new ExponentialBackoffRetry(1000, 3));
    observer.start();
    if (!observer.blockUntilConnected(30, TimeUnit.SECONDS)) {
      observer.close();
      throw new IllegalStateException("the benchmark's ZooKeeper was not reached within 30 s");
    }
  }

  /** The session timeout the server grants: the request, within 2 and 20 ticks. */
  Duration session() {
    Duration asked = requestedSession == null ? Duration.ofSeconds(60) : requestedSession;
    Duration min = zk.tick().multipliedBy(2);
    Duration max = zk.tick().multipliedBy(20);
    return asked.compareTo(min) < 0 ? min : asked.compareTo(max) > 0 ? max : asked;
  }

  @Override
  public String system() {
    return "Curator LeaderLatch";
  }

  @Override
  public String setting() {
    return (requestedSession == null ? "default" : "tuned") + ", session " + session().toSeconds() + " s";
  }

  @Override
  public String settings() {
    return requestedSession == null
        ? "Curator 5.9 defaults: session timeout 60 s requested (ZooKeeper grants " + session().toSeconds()
            + " s: its maxSessionTimeout is 20 ticks of " + zk.tick().toMillis() + " ms), connection timeout 15 s"
        : "session timeout " + requestedSession.toMillis() + " ms and connection timeout "
            + requestedSession.toMillis() + " ms (pglock's lease)";
  }

  @Override
  public List<String> contenderArgs(String election, String node) {
    List<String> a = new ArrayList<>(List.of("system=curator", "node=" + node, "election=" + election,
        "connect=" + zk.connectString()));
    if (requestedSession != null) {
      a.add("sessionMs=" + requestedSession.toMillis());
      a.add("connectionMs=" + requestedSession.toMillis());
    }
    return a;
  }

  @Override
  public String notApplicable(Fault fault) {
    return fault == Fault.TERMINATE ? "n/a: no database session (ZooKeeper)" : null;
  }

  @Override
  public boolean countsStatements() {
    return false; // it talks to ZooKeeper: pings every third of the session timeout
  }

  @Override
  public Duration expected(Fault fault) {
    return fault == Fault.SIGKILL || fault == Fault.PAUSE ? session() : Duration.ZERO;
  }

  @Override
  public boolean standbysInLine(Fleet fleet, Connection monitor) throws Exception {
    String path = "/pglock-bench/" + fleet.election;
    if (observer.checkExists().forPath(path) == null) {
      return false;
    }
    return observer.getChildren().forPath(path).size() >= fleet.size();
  }

  @Override
  public void close() {
    observer.close();
  }
}
