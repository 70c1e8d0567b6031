package io.pglock;

import io.pglock.election.Leader;
import io.pglock.election.LeaderElection;
import io.pglock.fault.NetworkNamespace;
import io.pglock.process.ChildJvm;
import io.pglock.testing.Await;
import io.pglock.testing.PrivateServer;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Three JVMs ({@code LockHolderProcess} in mode {@code elect}) in one election, each in a network
 * namespace of its own ({@link NetworkNamespace}, a "slot"), all on a {@link PrivateServer} that
 * listens on the namespaces' host addresses; and the faults a test injects into whichever child
 * leads: {@link Fault}. {@link #failover(Fault)} injects one, waits for its successor and checks
 * what the election promises, returning the {@link Failover} with every violation it saw (it does
 * not throw for a violation, so that a long run can count them). It throws {@link Stuck} only when
 * the election does not come back to one leader and two standbys waiting on the server, which
 * ends a run.
 *
 * <p>Children print {@code ELECTED <token> <t>} and {@code REVOKED <reason> <token> <t> DEADLINE
 * <d>}, all times {@link System#nanoTime()}: CLOCK_MONOTONIC, one clock for every process of the
 * machine, namespaces included. Conditions are awaited with deadlines, never slept for.
 */
final class ElectionCluster implements AutoCloseable {

  /** A fault injected into the leader. */
  enum Fault {
    /** SIGKILL: the process is gone; the server frees the lock when the connection closes. A new JVM joins. */
    SIGKILL,
    /** SIGSTOP until a successor is elected (past the lease), then SIGCONT. */
    SIGSTOP,
    /** {@code pg_terminate_backend} of the backend that holds the election's lock. */
    TERMINATE,
    /** A silent partition of the leader's namespace until a successor is elected and the old one revoked, then healed. */
    PARTITION,
    /** A clean shutdown ({@code EXIT}: the election is closed). A new JVM joins. */
    SHUTDOWN
  }

  /**
   * One failover.
   *
   * @param fault what was injected
   * @param millis from the injection to the successor's {@code elected}
   * @param steadyMillis from the injection to the steady state again: one leader, the other children
   *     (the old leader, or the JVM that replaced it) waiting on the server
   * @param violations what broke a promise (empty: none)
   * @param revokedAfterSuccessorMillis for {@link Fault#SHUTDOWN}, {@link Fault#TERMINATE} and
   *     {@link Fault#PARTITION}: how long after the successor's {@code elected} the old leader's
   *     {@code revoked} callback ran (negative: before); null for the others. Promised negative for
   *     SHUTDOWN only: the server frees the lock of a TERMINATE at once, and for a PARTITION the
   *     promise is the lease deadline's
   * @param successorAfterDeadlineMillis for {@link Fault#SIGSTOP} and {@link Fault#PARTITION}: how
   *     long after the old term's lease deadline (where it ends on its own side) the successor was
   *     elected; promised positive; null for the others
   */
  record Failover(Fault fault, double millis, double steadyMillis, List<String> violations,
      Double revokedAfterSuccessorMillis, Double successorAfterDeadlineMillis) {}

  /** The election did not come back to a steady state: the run cannot go on. */
  static final class Stuck extends RuntimeException {
    Stuck(String message) {
      super(message);
    }
  }

  private static final Duration CHILD_START = Duration.ofSeconds(60);
  private static final Duration STEADY = Duration.ofSeconds(60);
  private static final Duration EVENT = Duration.ofSeconds(20);
  /** A pglock log line at level ERROR in a child's stdout (logback's test pattern). */
  private static final Pattern LOGGED_ERROR = Pattern.compile("^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} \\[[^]]*] ERROR .*");

  private final PrivateServer server;
  private final DataSource serverData;
  private final List<Slot> slots = new ArrayList<>();
  private final List<ChildJvm> everyChild = new ArrayList<>();
  private final Duration lease;
  private final String election = "faults-" + UUID.randomUUID().toString().substring(0, 8);
  private final LockKey key = LockKey.named("test", LeaderElection.lockName(election));
  private final Set<String> errorsSeen = new HashSet<>();
  private Connection monitor; // the test's own connection to the server: one, not one per poll
  private ChildJvm stopped; // SIGSTOPped now: not a live child
  private int terms;
  private int joined;

  /** A namespace and the child that runs in it now. */
  private static final class Slot {
    final NetworkNamespace ns;
    ChildJvm child;
    String node;

    Slot(NetworkNamespace ns) {
      this.ns = ns;
    }
  }

  private record TermLine(long token, long at) {}

  /**
   * Starts a child in every namespace and waits for one leader and the others waiting on the server.
   *
   * @param server where the election's lock lives; it must listen on every namespace's host address
   * @param namespaces one child each
   * @param lease the children's lease
   */
  ElectionCluster(PrivateServer server, List<NetworkNamespace> namespaces, Duration lease) throws Exception {
    this.server = server;
    this.serverData = server.dataSource("pglock-test-faults");
    this.lease = lease;
    for (NetworkNamespace ns : namespaces) {
      slots.add(new Slot(ns));
    }
    boolean started = false;
    try {
      for (Slot slot : slots) {
        start(slot);
      }
      for (Slot slot : slots) {
        slot.child.awaitLine("JOINED", CHILD_START);
      }
      awaitSteady(1, new ArrayList<>());
      terms = 1;
      started = true;
    } finally {
      if (!started) {
        close();
      }
    }
  }

  /** The election's name. */
  String election() {
    return election;
  }

  /** How many terms there were so far (the first election included). */
  int terms() {
    return terms;
  }

  private void start(Slot slot) throws IOException {
    String node = "f" + (++joined) + "-" + election.substring(7);
    ChildJvm.Launch launch = new ChildJvm.Launch(slot.ns.commandPrefix(),
        "jdbc:postgresql://" + slot.ns.hostAddress() + ":" + server.port() + "/postgres", "postgres", null);
    slot.child = ChildJvm.start(launch, node, "elect", "namespace=test", "node=" + node, "election=" + election,
        "leaseMs=" + lease.toMillis());
    slot.node = node;
    everyChild.add(slot.child);
  }

  /** A child leads if it runs (not stopped) and its last ELECTED/REVOKED line is ELECTED. */
  private boolean leads(ChildJvm c) {
    return c != stopped && c.isAlive() && c.linesStarting("ELECTED").size() > c.linesStarting("REVOKED").size();
  }

  private List<Slot> leaders() {
    return slots.stream().filter(s -> leads(s.child)).toList();
  }

  /** Every term of every child so far, in the order of their election. */
  private List<TermLine> allTerms() {
    List<TermLine> all = new ArrayList<>();
    for (ChildJvm c : everyChild) {
      for (String line : c.linesStarting("ELECTED")) {
        String[] w = line.split(" ");
        all.add(new TermLine(Long.parseLong(w[1]), Long.parseLong(w[2])));
      }
    }
    all.sort(Comparator.comparingLong(TermLine::at));
    return all;
  }

  private int termCount() {
    int n = 0;
    for (ChildJvm c : everyChild) {
      n += c.linesStarting("ELECTED").size();
    }
    return n;
  }

  /**
   * Injects the fault into the leader, waits for the successor and for the steady state again (one
   * leader among the live children, the others waiting on the server), and checks the promises.
   *
   * @throws Stuck if no successor is elected, or the steady state does not come back, in time
   */
  Failover failover(Fault fault) throws Exception {
    List<String> v = new ArrayList<>();
    List<Slot> leading = leaders();
    if (leading.size() != 1) {
      throw new Stuck("not one leader before the fault: " + describe());
    }
    Slot slot = leading.get(0);
    ChildJvm old = slot.child;
    List<String> elected = old.linesStarting("ELECTED");
    long oldToken = Long.parseLong(elected.get(elected.size() - 1).split(" ")[1]);
    int seen = old.lineCount();
    String where = fault + " of " + slot.node + " (token " + oldToken + ")";
    long injected;
    TermLine next;
    Double revokedAfter = null;
    Double afterDeadline = null;
    switch (fault) {
      case SIGKILL -> {
        injected = System.nanoTime();
        old.kill();
        next = awaitSuccessor(Duration.ofSeconds(30), where);
        exitCode(old, 137, v, where);
        start(slot);
      }
      case SHUTDOWN -> {
        injected = System.nanoTime();
        old.send("EXIT");
        String revoked = awaitLine(old, seen, v, where, "REVOKED");
        next = awaitSuccessor(Duration.ofSeconds(30), where);
        if (revoked != null) {
          expect(v, where, revoked, "REVOKED SHUTDOWN " + oldToken + " ");
          revokedAfter = (tokenAndTime(revoked)[1] - next.at) / 1e6;
          if (tokenAndTime(revoked)[1] >= next.at) {
            v.add(where + ": successor elected at " + next.at + ", not after the old leader's revoked(SHUTDOWN) at "
                + tokenAndTime(revoked)[1]);
          }
        }
        exitCode(old, 0, v, where);
        start(slot);
      }
      case SIGSTOP -> {
        injected = System.nanoTime();
        old.signal("STOP");
        stopped = old;
        next = awaitSuccessor(lease.plusSeconds(30), where);
        if (next.at - injected < lease.toNanos() / 2) {
          v.add(where + ": successor elected " + (next.at - injected) / 1_000_000 + " ms after SIGSTOP, within half "
              + "the lease");
        }
        old.send("CHECK"); // read when it resumes
        old.signal("CONT");
        stopped = null;
        String first = awaitLine(old, seen, v, where, "ELECTED", "REVOKED");
        if (first != null) {
          expect(v, where, first, "REVOKED LEASE_EXPIRED " + oldToken + " ");
          afterDeadline = deadlineBefore(v, where, first, next);
        }
        String check = awaitLine(old, seen, v, where, "LEADER");
        if (check != null) {
          expect(v, where, check, "LEADER false ");
        }
      }
      case TERMINATE -> {
        Optional<Leader> holder = LeaderElection.currentLeader(serverData, PgLockSchema.DEFAULT_SCHEMA, "test", election);
        if (holder.isEmpty() || !holder.get().node().equals(Optional.of(slot.node))) {
          throw new Stuck(where + ": the who-holds-what view shows " + holder + " as the leader, not " + slot.node);
        }
        int pid = holder.get().pid();
        List<Integer> pids = holderPids();
        if (!pids.equals(List.of(pid))) {
          v.add(where + ": pg_locks' holders " + pids + ", the view's " + pid);
        }
        injected = System.nanoTime();
        if (!terminate(pid)) {
          v.add(where + ": pg_terminate_backend(" + pid + ") returned false");
        }
        next = awaitSuccessor(Duration.ofSeconds(30), where);
        String revoked = awaitLine(old, seen, v, where, "REVOKED");
        if (revoked != null) {
          expect(v, where, revoked, "REVOKED CONNECTION_LOST " + oldToken + " ");
          revokedAfter = (tokenAndTime(revoked)[1] - next.at) / 1e6;
        }
      }
      case PARTITION -> {
        injected = System.nanoTime();
        slot.ns.partition();
        try {
          next = awaitSuccessor(lease.plusSeconds(30), where);
          if (next.at - injected < lease.toNanos() / 2) {
            v.add(where + ": successor elected " + (next.at - injected) / 1_000_000 + " ms after the partition, "
                + "within half the lease");
          }
          // printed while still cut off: stdout is a pipe, not the network
          String revoked = awaitLine(old, seen, v, where, "ELECTED", "REVOKED");
          if (revoked != null) {
            expect(v, where, revoked, "REVOKED LEASE_EXPIRED " + oldToken + " ");
            afterDeadline = deadlineBefore(v, where, revoked, next);
            revokedAfter = (tokenAndTime(revoked)[1] - next.at) / 1e6;
          }
          int checked = old.lineCount();
          old.send("CHECK");
          String check = awaitLine(old, checked, v, where, "LEADER");
          if (check != null) {
            expect(v, where, check, "LEADER false ");
          }
        } finally {
          slot.ns.heal();
        }
      }
      default -> throw new IllegalArgumentException(fault.toString());
    }
    if (next.token <= oldToken) {
      v.add(where + ": the successor's token " + next.token + " is not above " + oldToken);
    }
    terms++;
    if (fault == Fault.SIGKILL || fault == Fault.SHUTDOWN) {
      try {
        slot.child.awaitLine("JOINED", CHILD_START);
      } catch (AssertionError e) {
        throw new Stuck("the JVM that replaces " + where + " did not join: " + e.getMessage());
      }
    }
    awaitSteady(terms, v);
    double steadyMillis = (System.nanoTime() - injected) / 1e6;
    errors(v);
    return new Failover(fault, (next.at - injected) / 1e6, steadyMillis, v, revokedAfter, afterDeadline);
  }

  /** Waits for the next term (one more than so far); a second new term is a violation. */
  private TermLine awaitSuccessor(Duration timeout, String where) {
    try {
      Await.until("a successor after " + where, timeout, () -> termCount() > terms);
    } catch (AssertionError e) {
      throw new Stuck(e.getMessage() + "; " + describe());
    }
    List<TermLine> all = allTerms();
    return all.get(terms); // the (terms+1)-th term by election time; more are caught by awaitSteady
  }

  /**
   * Waits for one leader among the live children, the others waiting on the server, and
   * {@code expectedTerms} terms; more terms than that is a violation (not one new leader).
   */
  private void awaitSteady(int expectedTerms, List<String> v) {
    try {
      Await.until(expectedTerms + " terms, one leader and " + (slots.size() - 1) + " standbys waiting on the server",
          STEADY, () -> termCount() > expectedTerms
              || termCount() == expectedTerms && leaders().size() == 1 && waiters() == slots.size() - 1);
    } catch (AssertionError e) {
      throw new Stuck(e.getMessage() + "; " + describe());
    }
    if (termCount() > expectedTerms) {
      v.add("more than one new leader: " + termCount() + " terms, expected " + expectedTerms + "; " + describe());
      terms = termCount();
    }
  }

  /** The old leader's exit code is the expected one; a violation if not, or if it does not exit. */
  private static void exitCode(ChildJvm old, int expected, List<String> v, String where) throws InterruptedException {
    try {
      int exit = old.awaitExit(EVENT);
      if (exit != expected) {
        v.add(where + ": exit code " + exit + ", not " + expected);
      }
    } catch (AssertionError e) {
      v.add(where + ": " + e.getMessage());
      old.close();
    }
  }

  /** The first line after {@code skip} with one of the keywords; a violation (and null) if none comes. */
  private static String awaitLine(ChildJvm c, int skip, List<String> v, String where, String... keywords)
      throws InterruptedException {
    try {
      return c.awaitAnyLine(skip, EVENT, keywords);
    } catch (AssertionError e) {
      v.add(where + ": " + e.getMessage());
      return null;
    }
  }

  private static void expect(List<String> v, String where, String line, String prefix) {
    if (!line.startsWith(prefix)) {
      v.add(where + ": expected \"" + prefix + "...\", got \"" + line + "\"");
    }
  }

  /**
   * The old term's lease deadline, where it ended on its own side, came before the successor's
   * election: a violation if not. Returns the ms from the deadline to the election (null: no deadline).
   */
  private static Double deadlineBefore(List<String> v, String where, String revoked, TermLine next) {
    String[] w = revoked.split(" ");
    if (w.length < 6 || !w[4].equals("DEADLINE")) {
      v.add(where + ": no DEADLINE in \"" + revoked + "\"");
      return null;
    }
    long deadline = Long.parseLong(w[5]);
    if (deadline >= next.at) {
      v.add(where + ": the old term's lease deadline " + deadline + " is not before the successor's election at "
          + next.at + " (" + (deadline - next.at) / 1e6 + " ms later)");
    }
    return (next.at - deadline) / 1e6;
  }

  /** {token, t} of {@code REVOKED <reason> <token> <t> ...}. */
  private static long[] tokenAndTime(String revoked) {
    String[] w = revoked.split(" ");
    return new long[] {Long.parseLong(w[2]), Long.parseLong(w[3])};
  }

  /** Lines of any child, not yet reported, that say ERROR (the child's) or are logged at level ERROR. */
  private void errors(List<String> v) {
    for (ChildJvm c : everyChild) {
      List<String> lines = c.lines();
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i);
        if ((line.startsWith("ERROR") || LOGGED_ERROR.matcher(line).matches())
            && errorsSeen.add(everyChild.indexOf(c) + "#" + i)) {
          v.add(c + " printed: " + line);
        }
      }
    }
  }

  /** Tokens strictly increase over every term so far, in election order: the violations. */
  List<String> tokenOrder() {
    List<String> v = new ArrayList<>();
    List<TermLine> all = allTerms();
    for (int i = 1; i < all.size(); i++) {
      if (all.get(i).token <= all.get(i - 1).token) {
        v.add("term " + (i + 1) + " has token " + all.get(i).token + ", not above " + all.get(i - 1).token);
      }
    }
    return v;
  }

  /** The live children, the leaders, the terms and the waiters, for failure messages. */
  String describe() {
    StringBuilder b = new StringBuilder("leaders ");
    b.append(leaders().stream().map(s -> s.node).toList()).append(", terms ").append(termCount())
        .append(" (expected ").append(terms).append("), waiters on the server ");
    try {
      b.append(waiters());
    } catch (RuntimeException e) {
      b.append('(').append(e.getMessage()).append(')');
    }
    for (Slot s : slots) {
      b.append("\n  ").append(s.ns).append(": ").append(s.child);
    }
    return b.toString();
  }

  /** The output of every child so far, for a failure. */
  String outputs() {
    StringBuilder b = new StringBuilder();
    for (ChildJvm c : everyChild) {
      b.append(c.output()).append('\n');
    }
    return b.toString();
  }

  private Connection monitor() throws SQLException {
    if (monitor == null || !monitor.isValid(5)) {
      if (monitor != null) {
        monitor.close();
      }
      monitor = serverData.getConnection();
    }
    return monitor;
  }

  /** How many requests for the election's lock wait on the server. */
  private int waiters() {
    try (PreparedStatement ps = monitor().prepareStatement("""
            SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND classid::bigint = ? AND objid::bigint = ? AND objsubid = ?""")) {
      keyParameters(ps);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    } catch (SQLException e) {
      throw new RuntimeException(e);
    }
  }

  /** The backends that hold the election's lock. */
  private List<Integer> holderPids() throws SQLException {
    try (PreparedStatement ps = monitor().prepareStatement("""
        SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND classid::bigint = ? AND objid::bigint = ? AND objsubid = ?""")) {
      keyParameters(ps);
      List<Integer> pids = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          pids.add(rs.getInt(1));
        }
      }
      return pids;
    }
  }

  private void keyParameters(PreparedStatement ps) throws SQLException {
    ps.setLong(1, key.first() & 0xFFFF_FFFFL);
    ps.setLong(2, key.second() & 0xFFFF_FFFFL);
    ps.setInt(3, key.objsubid());
  }

  private boolean terminate(int pid) throws SQLException {
    try (PreparedStatement ps = monitor().prepareStatement("SELECT pg_terminate_backend(?)")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  /** Heals every partition, kills every child (SIGKILL, which ends a stopped one too) and closes the monitor. */
  @Override
  public void close() {
    for (Slot s : slots) {
      if (s.ns.isPartitioned()) {
        try {
          s.ns.heal();
        } catch (IOException e) {
          System.err.println("could not heal " + s.ns + ": " + e);
        }
      }
    }
    for (ChildJvm c : everyChild) {
      c.close();
    }
    if (monitor != null) {
      try {
        monitor.close();
      } catch (SQLException e) {
        // closing anyway
      }
    }
  }
}
