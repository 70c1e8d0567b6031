package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.ownership.Ownership;
import io.pglock.ownership.ResourceOwner;
import io.pglock.process.ChildJvm;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Fair-share ownership across JVMs under churn: members over 64 resources, killed (SIGKILL), shut
 * down, paused past the lease (SIGSTOP, then SIGCONT) and added at random. Each member writes to the resources it owns with its fencing token
 * (see {@code OwnerProcess}), so that two owners at once show as a rejected write while the writer
 * still owns the resource. Checks: never two owners; after each change every resource is owned
 * again by a live member within the lease; once stable, owned counts differ by at most one.
 *
 * <p>Runs {@code pglock.ownership.seconds} seconds of churn (default 20, the CI version); the long
 * run: {@code ./mvnw -pl pglock-core -am verify -Dtest=OwnershipProcessTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Dpglock.ownership.seconds=300}.
 */
class OwnershipProcessTest extends PgLocksTestSupport {
  private static final int RESOURCES = 64;
  private static final Duration LEASE = Duration.ofSeconds(3);
  private static final Duration INTERVAL = Duration.ofMillis(200);
  private static final Duration CHILD_START = Duration.ofSeconds(60);
  private static final Duration BALANCE = Duration.ofSeconds(20);
  private static final int MIN_MEMBERS = 3;
  private static final int MAX_MEMBERS = 5;

  private final String suffix = UUID.randomUUID().toString().substring(0, 8);
  private final String group = "fair-" + suffix;
  private final String table = "own_" + suffix;
  private final Map<String, ChildJvm> live = new LinkedHashMap<>();
  private final List<ChildJvm> all = new ArrayList<>();
  private int started;

  @BeforeAll
  static void schema() {
    PgLockSchema.migrate(db().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @AfterEach
  void cleanUp() throws Exception {
    for (ChildJvm c : all) {
      c.close();
    }
    try (Connection c = db().connect(); Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS " + table);
    }
  }

  private void add() throws Exception {
    String node = "own-" + suffix + "-" + started++;
    ChildJvm child = ChildJvm.start(node, "own", "namespace=test", "node=" + node, "group=" + group,
        "resources=" + RESOURCES, "leaseMs=" + LEASE.toMillis(), "intervalMs=" + INTERVAL.toMillis(), "table=" + table);
    all.add(child);
    child.awaitLine("JOINED", CHILD_START);
    live.put(node, child);
  }

  /** Owned counts by live node, or null if a resource is unowned or held by a node that is not live. */
  private Map<String, Integer> counts(PgLocks observer) {
    List<ResourceOwner> owners = Ownership.owners(observer, group);
    Map<String, Integer> counts = new HashMap<>();
    live.keySet().forEach(n -> counts.put(n, 0));
    for (ResourceOwner o : owners) {
      String node = o.node().orElse("?");
      if (!counts.containsKey(node)) {
        return null;
      }
      counts.merge(node, 1, Integer::sum);
    }
    return owners.size() == RESOURCES ? counts : null;
  }

  private static boolean balanced(Map<String, Integer> counts) {
    return counts != null && counts.values().stream().mapToInt(i -> i).max().orElse(0)
        - counts.values().stream().mapToInt(i -> i).min().orElse(0) <= 1;
  }

  @Test
  void churn_neverTwoOwners_everyResourceOwnedAgainWithinTheLease_balancedWhenStable() throws Exception {
    try (Connection c = db().connect(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE " + table + " (resource text PRIMARY KEY, owner text, token bigint NOT NULL,"
          + " writes bigint NOT NULL)");
      s.execute("INSERT INTO " + table + " SELECT 'r' || i, NULL, 0, 0 FROM generate_series(0, " + (RESOURCES - 1)
          + ") i");
    }
    PgLocks observer = newLocks();
    long seconds = Long.getLong("pglock.ownership.seconds", 20);
    long seed = System.nanoTime();
    Random random = new Random(seed);
    System.out.println("ownership churn: " + seconds + " s, seed " + seed);
    for (int i = 0; i < 4; i++) {
      add();
    }
    await("64 resources balanced over 4 members", BALANCE, () -> balanced(counts(observer)));

    Map<String, List<Double>> reownedMs = new LinkedHashMap<>();
    long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
    int changes = 0;
    while (System.nanoTime() < end) {
      String kind = live.size() <= MIN_MEMBERS ? "add" : live.size() >= MAX_MEMBERS ? "kill"
          : List.of("kill", "kill", "shutdown", "pause", "add").get(random.nextInt(5));
      long t0 = System.nanoTime();
      if (kind.equals("add")) {
        add();
        t0 = System.nanoTime(); // the change is the join, not the JVM's start
      } else if (kind.equals("pause")) {
        // SIGSTOP past the lease: the server frees its locks after the lease, the others take them;
        // on SIGCONT the member finds its lease gone, is told LEASE_EXPIRED and joins again.
        String node = new ArrayList<>(live.keySet()).get(random.nextInt(live.size()));
        ChildJvm victim = live.remove(node);
        int lostBefore = victim.linesStarting("LOST").size();
        victim.signal("STOP");
        await("every resource owned again by the others while " + node + " is paused", LEASE.plusSeconds(10),
            () -> counts(observer) != null);
        double ms = (System.nanoTime() - t0) / 1e6;
        reownedMs.computeIfAbsent(kind, k -> new ArrayList<>()).add(ms);
        assertThat(ms).as("re-owned after a pause (ms), lease %s", LEASE).isLessThan(LEASE.toMillis() + 2000);
        victim.signal("CONT");
        await(node + " told of its losses", Duration.ofSeconds(20),
            () -> victim.linesStarting("LOST").size() > lostBefore);
        List<String> lost = victim.linesStarting("LOST"); // one snapshot: the member may still be printing
        assertThat(lost.subList(lostBefore, lost.size()))
            .allMatch(l -> l.contains("LEASE_EXPIRED") || l.contains("CONNECTION_LOST"));
        live.put(node, victim);
      } else {
        String node = new ArrayList<>(live.keySet()).get(random.nextInt(live.size()));
        ChildJvm victim = live.remove(node);
        if (kind.equals("kill")) {
          victim.kill();
        } else {
          victim.send("EXIT");
        }
        await("every resource owned again by a live member after " + kind, LEASE.plusSeconds(10),
            () -> counts(observer) != null);
        double ms = (System.nanoTime() - t0) / 1e6;
        reownedMs.computeIfAbsent(kind, k -> new ArrayList<>()).add(ms);
        assertThat(ms).as("re-owned after %s (ms), lease %s", kind, LEASE).isLessThan(LEASE.toMillis());
        assertThat(victim.awaitExit(Duration.ofSeconds(30))).isEqualTo(kind.equals("kill") ? 137 : 0);
      }
      changes++;
      await("balanced within one after " + kind, BALANCE, () -> balanced(counts(observer)));
    }
    System.out.println("ownership churn: " + changes + " changes, " + started + " members started; "
        + "resources owned again after (ms) " + reownedMs + "; final counts " + counts(observer));
    for (ChildJvm c : all) {
      assertThat(c.linesStarting("OVERLAP")).as("two owners at once, " + c).isEmpty();
      assertThat(c.linesStarting("STALE")).as("token not above the earlier owner's, " + c).isEmpty();
      assertThat(c.linesStarting("ERROR")).as(c.output()).isEmpty();
    }
    try (Connection c = db().connect();
        PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + table + " WHERE writes = 0")) {
      var rs = ps.executeQuery();
      rs.next();
      assertThat(rs.getInt(1)).as("resources never written").isZero();
    }
  }
}
