package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.ElectionCluster.Failover;
import io.pglock.ElectionCluster.Fault;
import io.pglock.fault.NetworkNamespace;
import io.pglock.testing.PrivateServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Leader election under every kind of failure, across three JVMs that each run in a network
 * namespace of their own ({@link ElectionCluster}): SIGKILL of the leader, SIGSTOP past its lease,
 * {@code pg_terminate_backend} of its lock session, a silent network partition of its namespace,
 * and a clean shutdown. After each: exactly one new leader, the old one revoked before the new one
 * was elected where the election promises it, tokens strictly increasing, no ERROR.
 *
 * <p>The election runs on a {@link PrivateServer} of this class's own (the shared server listens on
 * 127.0.0.1 only, which a namespace cannot reach, and must not be restarted): it listens on
 * 127.0.0.1 and on the namespaces' host addresses, so the server's own end of every connection
 * faces the partition: its {@code idle_session_timeout}, keepalives and {@code tcp_user_timeout}
 * (set by pglock from the lease) are what free a cut-off leader's lock, as in production.
 *
 * <p>{@link #mixedFaults_oneNewLeaderEachTime_oldRevokedFirst_tokensIncrease()} is the long run:
 * {@value #SHORT_FAILOVERS} failovers in {@code ./mvnw verify}; {@code pglock-core/faults.sh
 * --failovers N} runs it with N (system property {@value #FAILOVERS_PROPERTY}). Skipped, with the
 * reason, where network namespaces cannot be made (not root, no {@code ip} or {@code iptables}) or
 * no private server can be started.
 */
@org.junit.jupiter.api.Tag("faults") // real servers and processes failing; run on one JDK in CI (.ci/run)
class LeaderElectionFaultsTest extends PgLocksTestSupport {
  /** The children's lease: short, so that a pause or a partition fails over in about 2 s. */
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final int CHILDREN = 3;
  private static final int PARTITION_ROUNDS = 3;
  static final String FAILOVERS_PROPERTY = "pglock.faults.failovers";
  static final String SEED_PROPERTY = "pglock.faults.seed";
  static final int SHORT_FAILOVERS = 10;

  private static final List<NetworkNamespace> namespaces = new ArrayList<>();
  private static PrivateServer server;
  private static Path hbaDir;
  /** Why the tests cannot run here (each test is skipped with it: visible in the report), or null. */
  private static String skipReason;
  private ElectionCluster cluster;

  @BeforeAll
  static void namespacesAndServer() throws Exception {
    Optional<String> unavailable = NetworkNamespace.unavailableReason();
    if (unavailable.isPresent()) {
      skipReason = "no network namespaces for the partition: " + unavailable.get();
      System.err.println("LeaderElectionFaultsTest skipped: " + skipReason);
      return;
    }
    NetworkNamespace.removeStale();
    String subnet = NetworkNamespace.freeSubnet();
    for (int i = 0; i < CHILDREN; i++) {
      namespaces.add(NetworkNamespace.create(subnet, i));
    }
    // The server's hba file: trust on the loopback and the namespaces' /24, nothing else.
    hbaDir = Files.createTempDirectory("pglock-faults-hba-");
    Files.setPosixFilePermissions(hbaDir, PosixFilePermissions.fromString("rwxr-xr-x")); // read by user postgres
    Path hba = hbaDir.resolve("pg_hba.conf");
    Files.writeString(hba, String.join("\n", "local all all trust", "host all all 127.0.0.1/32 trust",
        "host all all " + subnet + ".0/24 trust", ""), StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(hba, PosixFilePermissions.fromString("rw-r--r--"));
    String listen = "127.0.0.1," + namespaces.stream().map(NetworkNamespace::hostAddress).collect(Collectors.joining(","));
    try {
      server = PrivateServer.start("listen_addresses=" + listen, "hba_file=" + hba, "max_connections=100");
    } catch (PrivateServer.Unavailable e) {
      skipReason = "cannot start a PostgreSQL server of this test's own: " + e.getMessage();
      System.err.println("LeaderElectionFaultsTest skipped: " + skipReason);
      return;
    }
    PgLockSchema.migrate(server.dataSource("pglock-test-faults"), PgLockSchema.DEFAULT_SCHEMA);
  }

  @BeforeEach
  void skipWhereUnavailable() {
    assumeTrue(skipReason == null, () -> skipReason);
  }

  @AfterAll
  static void removeNamespacesAndServer() throws Exception {
    try {
      if (server != null) {
        server.close();
      }
    } finally {
      server = null;
      skipReason = null;
      for (NetworkNamespace ns : namespaces) {
        ns.close();
      }
      namespaces.clear();
      if (hbaDir != null) {
        Files.deleteIfExists(hbaDir.resolve("pg_hba.conf"));
        Files.deleteIfExists(hbaDir);
        hbaDir = null;
      }
    }
  }

  @AfterEach
  void stopChildren() {
    if (cluster != null) {
      cluster.close();
      cluster = null;
    }
  }

  /**
   * The leader's namespace is cut off silently (every packet dropped, no error on either side) until
   * a successor is elected and the old leader has revoked its term, then healed. The server frees
   * the lock only when the lease runs out on its side; the old leader's lease deadline (where its
   * term ends on its own side: {@code isLeader()} reads it) comes before the successor's election,
   * its revocation says LEASE_EXPIRED, and after the heal it stands again.
   */
  @Test
  void silentPartitionOfLeader_successorOnlyAfterOldLeaseDeadline_oldRevokedLeaseExpired() throws Exception {
    cluster = new ElectionCluster(server, namespaces, LEASE);
    List<Double> failoverMs = new ArrayList<>();
    List<Double> revokedMs = new ArrayList<>();
    List<Double> afterDeadlineMs = new ArrayList<>();
    for (int round = 1; round <= PARTITION_ROUNDS; round++) {
      Failover f = run(Fault.PARTITION);
      assertThat(f.violations()).as("violations of partition %d", round).isEmpty();
      failoverMs.add(f.millis());
      revokedMs.add(f.revokedAfterSuccessorMillis());
      afterDeadlineMs.add(f.successorAfterDeadlineMillis());
    }
    assertThat(cluster.tokenOrder()).as("tokens in election order").isEmpty();
    System.out.println("silent partition of the leader (lease " + LEASE.toMillis() + " ms): new leader elected after (ms) "
        + round(failoverMs) + "; the successor elected after the old lease deadline by (ms) " + round(afterDeadlineMs)
        + "; the old leader's revoked ran (ms, negative: before the successor's elected) " + round(revokedMs));
  }

  /**
   * The long run: failovers of every kind, mixed (each block of five is the five kinds in a random
   * order, from a printed seed), counting the violations instead of stopping at the first. Prints
   * a summary line ({@code ELECTION FAULTS: ...}), also written to
   * {@code target/election-faults-summary.txt}, and fails if a violation was seen.
   */
  @Test
  void mixedFaults_oneNewLeaderEachTime_oldRevokedFirst_tokensIncrease() throws Exception {
    int asked = Integer.getInteger(FAILOVERS_PROPERTY, SHORT_FAILOVERS);
    long seed = Long.getLong(SEED_PROPERTY, System.nanoTime());
    Random random = new Random(seed);
    List<Fault> schedule = new ArrayList<>();
    while (schedule.size() < asked) {
      List<Fault> block = new ArrayList<>(Arrays.asList(Fault.values()));
      Collections.shuffle(block, random);
      schedule.addAll(block.subList(0, Math.min(block.size(), asked - schedule.size())));
    }
    long began = System.nanoTime();
    cluster = new ElectionCluster(server, namespaces, LEASE);
    List<Failover> done = new ArrayList<>();
    List<String> violations = new ArrayList<>();
    for (Fault fault : schedule) {
      try {
        Failover f = run(fault);
        done.add(f);
        violations.addAll(f.violations());
        System.out.printf(Locale.ROOT, "FAILOVER %d/%d %s: new leader after %.1f ms, steady after %.0f ms, "
            + "violations %d%s%n", done.size(), asked, fault, f.millis(), f.steadyMillis(), f.violations().size(),
            f.violations().isEmpty() ? "" : ": " + f.violations());
      } catch (ElectionCluster.Stuck e) {
        violations.add("STUCK after " + done.size() + " failovers, at " + fault + ": " + e.getMessage());
        System.out.println(cluster.outputs());
        break;
      } catch (Exception | AssertionError e) { // the run cannot go on: counted, and the summary still printed
        violations.add("ABORTED after " + done.size() + " failovers, at " + fault + ": " + e);
        e.printStackTrace(System.out);
        System.out.println(cluster.outputs());
        break;
      }
    }
    violations.addAll(cluster.tokenOrder());
    double seconds = (System.nanoTime() - began) / 1e9;
    String summary = summary(done, asked, seed, seconds, violations);
    System.out.println(summary);
    Path file = Path.of("target", "election-faults-summary.txt");
    Files.createDirectories(file.getParent());
    Files.writeString(file, summary + "\n", StandardCharsets.UTF_8);
    assertThat(violations).as("violations in %d failovers (seed %d)", done.size(), seed).isEmpty();
    assertThat(done).as("failovers done").hasSize(asked);
  }

  private Failover run(Fault fault) throws Exception {
    return cluster.failover(fault);
  }

  /** The summary: failovers per kind with p50 and max time, the violations, the seed to repeat the order. */
  static String summary(List<Failover> done, int asked, long seed, double seconds, List<String> violations) {
    Map<Fault, List<Double>> byKind = new EnumMap<>(Fault.class);
    for (Failover f : done) {
      byKind.computeIfAbsent(f.fault(), k -> new ArrayList<>()).add(f.millis());
    }
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "ELECTION FAULTS: %d failovers of %d asked in %.0f s (%d JVMs, lease %d ms, "
        + "seed %d): ", done.size(), asked, seconds, CHILDREN, LEASE.toMillis(), seed));
    b.append(byKind.entrySet().stream().map(e -> String.format(Locale.ROOT, "%s %d (p50 %s, max %s)", e.getKey(),
        e.getValue().size(), ms(percentile(e.getValue(), 50)), ms(percentile(e.getValue(), 100))))
        .collect(Collectors.joining(", ")));
    b.append("; violations ").append(violations.size());
    List<Double> shutdown = values(done, Fault.SHUTDOWN, Failover::revokedAfterSuccessorMillis);
    if (!shutdown.isEmpty()) {
      b.append(String.format(Locale.ROOT, "%n  SHUTDOWN: the old leader's revoked(SHUTDOWN) ran before the successor's "
          + "elected in %d of %d (by p50 %s, min %s; promised)", shutdown.stream().filter(d -> d < 0).count(),
          shutdown.size(), ms(-percentile(shutdown, 50)), ms(-percentile(shutdown, 100))));
    }
    for (Fault kind : List.of(Fault.SIGSTOP, Fault.PARTITION)) {
      List<Double> after = values(done, kind, Failover::successorAfterDeadlineMillis);
      if (!after.isEmpty()) {
        b.append(String.format(Locale.ROOT, "%n  %s: the old term's lease deadline came before the successor's elected "
            + "in %d of %d (by min %s, p50 %s, max %s; promised)", kind, after.stream().filter(d -> d > 0).count(),
            after.size(), ms(percentile(after, 0)), ms(percentile(after, 50)), ms(percentile(after, 100))));
      }
    }
    List<Double> partition = values(done, Fault.PARTITION, Failover::revokedAfterSuccessorMillis);
    if (!partition.isEmpty()) {
      b.append(String.format(Locale.ROOT, "%n  PARTITION: the old leader's revoked(LEASE_EXPIRED) callback ran before "
          + "the successor's elected in %d of %d (the latest at %s from it, negative: before; a notification, "
          + "not promised)",
          partition.stream().filter(d -> d < 0).count(), partition.size(), ms(percentile(partition, 100))));
    }
    List<Double> terminate = values(done, Fault.TERMINATE, Failover::revokedAfterSuccessorMillis);
    if (!terminate.isEmpty()) {
      b.append(String.format(Locale.ROOT, "%n  TERMINATE: the old leader's revoked(CONNECTION_LOST) ran after the "
          + "successor's elected in %d of %d (p50 %s, max %s from it, negative: before; not promised: the server "
          + "frees the lock at once)",
          terminate.stream().filter(d -> d > 0).count(), terminate.size(), ms(percentile(terminate, 50)),
          ms(percentile(terminate, 100))));
    }
    for (String v : violations) {
      b.append("\n  VIOLATION ").append(v);
    }
    return b.toString();
  }

  private static List<Double> values(List<Failover> done, Fault kind, Function<Failover, Double> value) {
    return done.stream().filter(f -> f.fault() == kind && value.apply(f) != null).map(value).toList();
  }

  /** The nearest-rank percentile (0: the min, 100: the max). */
  static double percentile(List<Double> values, int p) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int rank = (int) Math.ceil(p / 100.0 * sorted.size());
    return sorted.get(Math.max(0, rank - 1));
  }

  private static String ms(double millis) {
    if (Math.abs(millis) >= 1000) {
      return String.format(Locale.ROOT, "%.2f s", millis / 1000);
    }
    return String.format(Locale.ROOT, Math.abs(millis) < 10 ? "%.1f ms" : "%.0f ms", millis);
  }

  private static List<String> round(List<Double> ms) {
    return ms.stream().map(d -> String.format(Locale.ROOT, "%.1f", d)).toList();
  }
}
