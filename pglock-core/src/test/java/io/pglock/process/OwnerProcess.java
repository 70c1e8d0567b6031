package io.pglock.process;

import io.pglock.PgLocks;
import io.pglock.ownership.OwnedResource;
import io.pglock.ownership.Owner;
import io.pglock.ownership.Ownership;
import io.pglock.ownership.Release;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Mode {@code own group=G resources=N leaseMs=L intervalMs=I table=T} of {@link LockHolderProcess}:
 * a member of fair-share ownership group G over resources {@code r0..r<N-1>}. Prints
 * {@code JOINED}, {@code GAINED <r> <token>} and {@code LOST <r> <why> <token>} as its owner is
 * told. While it owns a resource it writes to it, every few milliseconds, in a transaction of its
 * own: {@code UPDATE T SET owner, token, writes + 1 WHERE resource = r AND token <= mine}. A write
 * that finds a newer token in the row while this member still owns the resource, checked after
 * the write, means two owners at once: it prints {@code OVERLAP <r> <token>}. A gain whose token
 * is not above the row's while it still owns the resource prints {@code STALE <r> <token> <row's>}.
 * Ends on {@code EXIT} or when stdin closes, leaving the group cleanly.
 */
final class OwnerProcess {
  private static final long WRITE_PAUSE_MILLIS = 20;

  private OwnerProcess() {}

  static int own(Map<String, String> opts) throws Exception {
    Duration lease = Duration.ofMillis(Long.parseLong(opts.get("leaseMs")));
    String table = opts.get("table");
    List<String> resources = new ArrayList<>();
    for (int i = 0; i < Integer.parseInt(opts.get("resources")); i++) {
      resources.add("r" + i);
    }
    DataSource ds = LockHolderProcess.dataSource(opts);
    java.util.concurrent.atomic.AtomicReference<Ownership> self = new java.util.concurrent.atomic.AtomicReference<>();
    try (PgLocks locks = PgLocks.builder(ds).namespace(opts.get("namespace")).nodeName(opts.get("node"))
            .lease(lease).build();
        Ownership ownership = Ownership.builder(locks, opts.get("group"))
            .rebalanceInterval(Duration.ofMillis(Long.parseLong(opts.get("intervalMs"))))
            .join(resources, new Owner() {
              @Override
              public void gained(OwnedResource r) {
                LockHolderProcess.out("GAINED " + r.resource() + " " + r.fencingToken());
                checkNewer(ds, table, r, self.get());
              }

              @Override
              public void lost(OwnedResource r, Release why) {
                LockHolderProcess.out("LOST " + r.resource() + " " + why + " " + r.fencingToken());
              }
            })) {
      self.set(ownership);
      LockHolderProcess.out("JOINED");
      Thread writes = new Thread(() -> writeWhileOwned(ownership, ds, table), "writes");
      writes.setDaemon(true);
      writes.start();
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null && !line.trim().equals("EXIT")) {
          // only EXIT matters
        }
      }
      writes.interrupt();
    }
    return 0;
  }

  /**
   * A new owner's token must be above every earlier owner's, as the row tells, while it owns the
   * resource. A gain told late, after a pause past the lease in which a newer owner took over and
   * wrote, is no longer owned when checked (the ownership's answer turns false at the lease
   * deadline), as for OVERLAP; during the join (no ownership yet to ask) every newer row counts.
   */
  private static void checkNewer(DataSource ds, String table, OwnedResource r, Ownership ownership) {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT token FROM " + table + " WHERE resource = ?")) {
      ps.setString(1, r.resource());
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next() && rs.getLong(1) > r.fencingToken() // equal: our own writer was first
            && (ownership == null || ownership.ownership(r.resource())
                .filter(o -> o.fencingToken() == r.fencingToken()).isPresent())) {
          LockHolderProcess.out("STALE " + r.resource() + " " + r.fencingToken() + " " + rs.getLong(1));
        }
      }
    } catch (SQLException e) {
      LockHolderProcess.out("WARN gain check failed: " + e.getMessage().replace('\n', ' '));
    }
  }

  /**
   * Writes while owned; a failed connection (the server restarted, or failed over to its standby)
   * is replaced, so that the writes, and the overlap check, go on against the new server.
   */
  private static void writeWhileOwned(Ownership ownership, DataSource ds, String table) {
    while (!Thread.currentThread().isInterrupted()) {
      try (Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        while (!Thread.currentThread().isInterrupted()) {
          for (OwnedResource r : ownership.owned()) {
            int rows;
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + table
                + " SET owner = ?, token = ?, writes = writes + 1 WHERE resource = ? AND token <= ?")) {
              ps.setString(1, r.memberId());
              ps.setLong(2, r.fencingToken());
              ps.setString(3, r.resource());
              ps.setLong(4, r.fencingToken());
              rows = ps.executeUpdate();
            }
            c.commit();
            Optional<OwnedResource> still = ownership.ownership(r.resource());
            if (rows == 0 && still.isPresent() && still.get().fencingToken() == r.fencingToken()) {
              LockHolderProcess.out("OVERLAP " + r.resource() + " " + r.fencingToken());
            }
          }
          Thread.sleep(WRITE_PAUSE_MILLIS); // the pace of the simulated work, not a synchronisation
        }
      } catch (InterruptedException e) {
        return;
      } catch (SQLException e) {
        LockHolderProcess.out("WARN writes failed, reconnecting: " + e.getMessage().replace('\n', ' '));
        try {
          Thread.sleep(100); // the pace of reconnecting, not a synchronisation
        } catch (InterruptedException stop) {
          return;
        }
      }
    }
  }
}
