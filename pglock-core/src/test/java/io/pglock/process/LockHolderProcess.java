package io.pglock.process;

import io.pglock.LockHandle;
import io.pglock.PgLocks;
import io.pglock.SessionSemaphore;
import io.pglock.WorkDistributor;
import io.pglock.election.Candidate;
import io.pglock.election.LeaderElection;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import io.pglock.internal.TestAccess;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The other JVM of the failure tests: holds a lock, or works as one worker of a work distribution,
 * and reports what happens on stdout, one event per line, a keyword first. Times are
 * {@link System#nanoTime()}, which on Linux is CLOCK_MONOTONIC and so comparable between JVMs on
 * one machine.
 *
 * <p>Arguments: a mode, then {@code key=value} options. Common options: {@code url}, {@code user}
 * (empty when the URL carries it), {@code namespace}, {@code node}; a password comes in the
 * environment variable {@code PGLOCK_CHILD_PASSWORD}.
 *
 * <ul>
 *   <li>{@code hold name=N leaseMs=L}: acquires N exclusively and prints
 *       {@code ACQUIRED <t> DEADLINE <leaseDeadline>}; holds it until stdin closes (or says
 *       {@code EXIT}) or the lock is lost, which prints {@code LOST <cause> <t> DEADLINE <d>},
 *       {@code d} being the lease deadline of the lock's session when it was lost. Prints
 *       {@code EXIT} before it exits.
 *   <li>{@code work worker=W resources=R table=P}: prints {@code READY}, waits for {@code GO} on
 *       stdin, then walks resources 0..R-1 with {@link WorkDistributor} until table {@code P_processed}
 *       holds every resource. Under each resource's lock it inserts the resource into
 *       {@code P_active} (primary key: a unique violation means two workers at once, printed as
 *       {@code OVERLAP <r>}), skips it if {@code P_processed} already has it, else works a few
 *       milliseconds and records it. Prints {@code WALK ...} per walk and {@code DONE ...} at the end.
 *   <li>{@code semaphore name=S permits=N rounds=R table=P}: prints {@code READY}, waits for
 *       {@code GO}, then R times takes a permit of semaphore S with N permits and, holding it, adds
 *       one to {@code P.inside} (raising {@code P.max_inside} to match) in one statement, works a few
 *       milliseconds, checks that the permit is still held and takes the one back. Prints
 *       {@code DONE rounds=R notHeld=K} at the end.
 *   <li>{@code fencedwrite name=N leaseMs=L table=T id=I style=check|conditional [schema=S]}: opens
 *       its writer's connection, acquires N exclusively with a fencing token ({@code withFencing()})
 *       and prints {@code ACQUIRED <token>}; then, for every {@code WRITE} line on stdin, writes its
 *       node name and token to row I of table T in a transaction of its own and prints the outcome.
 *       Style {@code check}: {@code SELECT S.check_fencing_token(namespace, N, token)}, then an
 *       upsert of the row; prints {@code WRITE_OK rows=1}, or {@code WRITE_REJECTED <sqlstate> <message>}
 *       if a statement fails. Style {@code conditional}: {@code UPDATE T SET v = node,
 *       fencing_token = token WHERE id = I AND fencing_token <= token}; prints {@code WRITE_OK rows=1}
 *       or {@code WRITE_REJECTED rows=0}. It writes whether or not it still holds the lock (a loss
 *       prints {@code LOST <cause>} and changes nothing): it plays a holder that does not know it
 *       was paused. Ends on {@code EXIT} or when stdin closes.
 *   <li>{@code elect election=E leaseMs=L}: joins leader election E and prints
 *       {@code ELECTED <token> <t>} and {@code REVOKED <reason> <token> <t> DEADLINE <d>} as its
 *       candidate is told ({@code d}: the lease deadline of the term's lock session, as it ended;
 *       all times {@link System#nanoTime()}). On {@code CHECK} prints {@code LEADER <isLeader()> <t>};
 *       ends on {@code EXIT} or when stdin closes, closing the election (a clean handover).
 *   <li>{@code own ...}: a member of a fair-share ownership group, see {@link OwnerProcess}.
 *   <li>{@code stallwrite ...}: a fenced writer that stops between its check and its commit, see
 *       {@link StalledWriterProcess}.
 * </ul>
 *
 * <p>A holder exits when stdin closes, so that it does not outlive the test that started it; the
 * tests also kill every child they start.
 */
public final class LockHolderProcess {
  private LockHolderProcess() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new HashMap<>();
    for (int i = 1; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      opts.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    int status;
    try {
      status = switch (args[0]) {
        case "hold" -> hold(opts);
        case "work" -> work(opts);
        case "semaphore" -> semaphore(opts);
        case "fencedwrite" -> fencedWrite(opts);
        case "elect" -> elect(opts);
        case "own" -> OwnerProcess.own(opts);
        case "stallwrite" -> StalledWriterProcess.run(opts);
        default -> throw new IllegalArgumentException("unknown mode " + args[0]);
      };
    } catch (Throwable t) {
      t.printStackTrace();
      out("ERROR " + t);
      status = 2;
    }
    out("EXIT");
    System.exit(status);
  }

  private static int hold(Map<String, String> opts) throws Exception {
    Duration lease = Duration.ofMillis(Long.parseLong(opts.get("leaseMs")));
    try (PgLocks locks = PgLocks.builder(dataSource(opts)).namespace(opts.get("namespace"))
        .nodeName(opts.get("node")).lease(lease).build()) {
      LockHandle h = locks.lock(opts.get("name")).acquire(Duration.ofSeconds(30));
      long acquired = System.nanoTime();
      LongSupplier deadline = TestAccess.leaseDeadline(h);
      CompletableFuture<String> end = new CompletableFuture<>();
      h.onLoss(cause -> {
        long now = System.nanoTime();
        out("LOST " + cause + " " + now + " DEADLINE " + deadline.getAsLong());
        end.complete("lost");
      });
      out("ACQUIRED " + acquired + " DEADLINE " + deadline.getAsLong());
      onStdinCommand(end);
      end.join();
      h.close();
    }
    return 0;
  }

  private static int elect(Map<String, String> opts) throws Exception {
    Duration lease = Duration.ofMillis(Long.parseLong(opts.get("leaseMs")));
    AtomicReference<LeaderElection> joined = new AtomicReference<>();
    CountDownLatch ready = new CountDownLatch(1);
    try (PgLocks locks = PgLocks.builder(dataSource(opts)).namespace(opts.get("namespace"))
        .nodeName(opts.get("node")).lease(lease).build();
        LeaderElection election = LeaderElection.join(locks, opts.get("election"), new Candidate() {
          private LongSupplier deadline; // the current term's lock session's lease deadline

          @Override
          public void elected(Term term) {
            long now = System.nanoTime();
            deadline = leaseDeadline(joined, ready);
            out("ELECTED " + term.fencingToken() + " " + now);
          }

          @Override
          public void revoked(Term term, Revocation reason) {
            long now = System.nanoTime();
            out("REVOKED " + reason + " " + term.fencingToken() + " " + now
                + (deadline == null ? "" : " DEADLINE " + deadline.getAsLong()));
          }
        })) {
      joined.set(election);
      ready.countDown();
      out("JOINED " + election);
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null && !line.trim().equals("EXIT")) {
          if (line.trim().equals("CHECK")) {
            boolean leads = election.isLeader();
            out("LEADER " + leads + " " + System.nanoTime());
          }
        }
      }
    }
    return 0;
  }

  /**
   * The lease deadline of the lock session of the election's current term, read through the
   * election's (private) handle: called on the election's thread from {@code elected}, where the
   * handle is set. Null if it cannot be read.
   */
  private static LongSupplier leaseDeadline(AtomicReference<LeaderElection> joined, CountDownLatch ready) {
    try {
      if (!ready.await(10, TimeUnit.SECONDS)) {
        return null;
      }
      Field f = joined.get().getClass().getDeclaredField("handle");
      f.setAccessible(true);
      return TestAccess.leaseDeadline((LockHandle) f.get(joined.get()));
    } catch (ReflectiveOperationException | InterruptedException | RuntimeException e) {
      out("ERROR no lease deadline: " + e);
      return null;
    }
  }

  private static int fencedWrite(Map<String, String> opts) throws Exception {
    Duration lease = Duration.ofMillis(Long.parseLong(opts.get("leaseMs")));
    String namespace = opts.get("namespace");
    String node = opts.get("node");
    String name = opts.get("name");
    String table = opts.get("table");
    int id = Integer.parseInt(opts.get("id"));
    String schema = opts.getOrDefault("schema", "pglock");
    boolean conditional = switch (opts.get("style")) {
      case "check" -> false;
      case "conditional" -> true;
      default -> throw new IllegalArgumentException("style must be check or conditional: " + opts.get("style"));
    };
    PGSimpleDataSource ds = dataSource(opts);
    try (Connection writer = ds.getConnection();
        PgLocks locks = PgLocks.builder(ds).namespace(namespace).nodeName(node).lease(lease).build()) {
      writer.setAutoCommit(false);
      LockHandle h = locks.lock(name).withFencing().acquire(Duration.ofSeconds(60));
      long token = h.fencingToken();
      h.onLoss(cause -> out("LOST " + cause));
      out("ACQUIRED " + token);
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null && !line.trim().equals("EXIT")) {
          if (line.trim().equals("WRITE")) {
            out(conditional ? conditionalWrite(writer, table, id, node, token)
                : checkedWrite(writer, schema, namespace, name, table, id, node, token));
          }
        }
      }
      h.close();
    }
    return 0;
  }

  /** The check pattern: the SQL check, then the write, in one transaction. */
  private static String checkedWrite(Connection c, String schema, String namespace, String name, String table,
      int id, String node, long token) throws SQLException {
    try {
      try (PreparedStatement ps = c.prepareStatement("SELECT " + schema + ".check_fencing_token(?, ?, ?)")) {
        ps.setString(1, namespace);
        ps.setString(2, name);
        ps.setLong(3, token);
        ps.execute();
      }
      int rows;
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " (id, v, fencing_token) VALUES (?, ?, ?)"
          + " ON CONFLICT (id) DO UPDATE SET v = excluded.v, fencing_token = excluded.fencing_token")) {
        ps.setInt(1, id);
        ps.setString(2, node);
        ps.setLong(3, token);
        rows = ps.executeUpdate();
      }
      c.commit();
      return "WRITE_OK rows=" + rows;
    } catch (SQLException e) {
      c.rollback();
      return "WRITE_REJECTED " + e.getSQLState() + " " + e.getMessage().replace('\n', ' ');
    }
  }

  /** The conditional-update pattern: the row keeps the newest token it was written with. */
  private static String conditionalWrite(Connection c, String table, int id, String node, long token)
      throws SQLException {
    int rows;
    try (PreparedStatement ps = c.prepareStatement(
        "UPDATE " + table + " SET v = ?, fencing_token = ? WHERE id = ? AND fencing_token <= ?")) {
      ps.setString(1, node);
      ps.setLong(2, token);
      ps.setInt(3, id);
      ps.setLong(4, token);
      rows = ps.executeUpdate();
    } catch (SQLException e) {
      c.rollback();
      return "WRITE_REJECTED " + e.getSQLState() + " " + e.getMessage().replace('\n', ' ');
    }
    c.commit();
    return rows > 0 ? "WRITE_OK rows=" + rows : "WRITE_REJECTED rows=0";
  }

  private static int work(Map<String, String> opts) throws Exception {
    String worker = opts.get("worker");
    int n = Integer.parseInt(opts.get("resources"));
    String active = opts.get("table") + "_active";
    String processed = opts.get("table") + "_processed";
    List<Integer> resources = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      resources.add(i);
    }
    PGSimpleDataSource ds = dataSource(opts);
    try (PgLocks locks = PgLocks.builder(ds).namespace(opts.get("namespace")).nodeName(opts.get("node")).build();
        Connection c = ds.getConnection()) {
      try (Statement st = c.createStatement()) {
        st.execute("SET application_name = 'worker-table-" + worker + "'");
      }
      CompletableFuture<String> go = new CompletableFuture<>();
      onStdinCommand(go);
      out("READY");
      if (!"GO".equals(go.join())) {
        return 1;
      }
      WorkDistributor distributor = WorkDistributor.of(locks);
      int walks = 0;
      int passed = 0;
      int skipped = 0;
      int failed = 0;
      int[] overlaps = new int[1];
      int[] already = new int[1];
      long giveUpAt = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (true) {
        WorkDistributor.WorkReport<Integer> report = distributor.run(resources, r -> "resource-" + r,
            r -> workOn(c, worker, r, active, processed, overlaps, already));
        walks++;
        passed += report.processed().size();
        skipped += report.skipped().size();
        failed += report.failed().size();
        report.failed().forEach((r, e) -> {
          out("FAILED " + r + " " + e);
          e.printStackTrace();
        });
        out("WALK " + walks + " processed=" + report.processed().size() + " skipped=" + report.skipped().size()
            + " failed=" + report.failed().size());
        if (count(c, "SELECT count(DISTINCT resource) FROM " + processed) >= n) {
          break;
        }
        if (System.nanoTime() - giveUpAt > 0) {
          out("GAVE_UP");
          return 1;
        }
      }
      out("DONE walks=" + walks + " worked=" + (passed - already[0]) + " alreadyDone=" + already[0]
          + " skipped=" + skipped + " failed=" + failed + " overlaps=" + overlaps[0]);
    }
    return 0;
  }

  private static int semaphore(Map<String, String> opts) throws Exception {
    int rounds = Integer.parseInt(opts.get("rounds"));
    String table = opts.get("table");
    PGSimpleDataSource ds = dataSource(opts);
    try (PgLocks locks = PgLocks.builder(ds).namespace(opts.get("namespace")).nodeName(opts.get("node")).build();
        Connection c = ds.getConnection()) {
      SessionSemaphore semaphore = locks.semaphore(opts.get("name"), Integer.parseInt(opts.get("permits")));
      CompletableFuture<String> go = new CompletableFuture<>();
      onStdinCommand(go);
      out("READY");
      if (!"GO".equals(go.join())) {
        return 1;
      }
      int notHeld = 0;
      for (int i = 0; i < rounds; i++) {
        try (LockHandle h = semaphore.acquire(Duration.ofSeconds(60))) {
          count(c, "UPDATE " + table + " SET inside = inside + 1, max_inside = greatest(max_inside, inside + 1),"
              + " rounds = rounds + 1 RETURNING inside");
          Thread.sleep(ThreadLocalRandom.current().nextInt(2, 12)); // the simulated work
          if (!h.isHeld()) {
            notHeld++;
          }
          count(c, "UPDATE " + table + " SET inside = inside - 1 RETURNING inside");
        }
      }
      out("DONE rounds=" + rounds + " notHeld=" + notHeld);
    }
    return 0;
  }

  /** The work for one resource, run under its lock. */
  private static void workOn(Connection c, String worker, int r, String active, String processed,
      int[] overlaps, int[] already) {
    try {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + active + " (resource, worker) VALUES (?, ?)")) {
        ps.setInt(1, r);
        ps.setString(2, worker);
        ps.executeUpdate();
      } catch (SQLException e) {
        if ("23505".equals(e.getSQLState())) {
          overlaps[0]++;
          out("OVERLAP " + r);
          return;
        }
        throw e;
      }
      boolean isDone;
      try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + processed + " WHERE resource = ?")) {
        ps.setInt(1, r);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          isDone = rs.getInt(1) > 0;
        }
      }
      if (!isDone) {
        Thread.sleep(ThreadLocalRandom.current().nextInt(3, 10)); // the simulated work
      } else {
        already[0]++;
      }
      try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + active + " WHERE resource = ?")) {
        ps.setInt(1, r);
        ps.executeUpdate();
      }
      if (!isDone) {
        try (PreparedStatement ps = c.prepareStatement(
            "INSERT INTO " + processed + " (resource, worker) VALUES (?, ?)")) {
          ps.setInt(1, r);
          ps.setString(2, worker);
          ps.executeUpdate();
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("worker " + worker + " failed on resource " + r + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private static int count(Connection c, String sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  static PGSimpleDataSource dataSource(Map<String, String> opts) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(opts.get("url"));
    if (!opts.getOrDefault("user", "").isEmpty()) {
      ds.setUser(opts.get("user"));
    }
    String password = System.getenv("PGLOCK_CHILD_PASSWORD");
    if (password != null && !password.isEmpty()) {
      ds.setPassword(password);
    }
    ds.setApplicationName("pglock-test-child");
    return ds;
  }

  /**
   * Completes the future with the first stdin line that is a command ({@code GO}, {@code EXIT}),
   * or with "EOF" when stdin closes: the parent is gone or done with this process.
   */
  private static void onStdinCommand(CompletableFuture<String> future) {
    Thread t = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null) {
          String command = line.trim();
          if (command.equals("GO") || command.equals("EXIT")) {
            future.complete(command);
          }
        }
      } catch (Exception e) {
        // stdin failed: treat as closed
      }
      future.complete("EOF");
    }, "stdin");
    t.setDaemon(true);
    t.start();
  }

  static synchronized void out(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
