package io.pglock.process;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;

/**
 * Mode {@code stallwrite namespace=NS name=N token=T [idleInTxMs=M]} of {@link LockHolderProcess}:
 * a fenced writer that stops between its check and its commit. It opens its writer's connection
 * (with {@code idle_in_transaction_session_timeout} set to M ms on it, when given), begins a
 * transaction, runs {@code pglock.check_fencing_token(NS, N, T)} and prints {@code CHECKED} (or
 * {@code CHECK_REJECTED <sqlstate>}), and then waits, the transaction open (and the fencing row
 * locked), for the test to stop it with SIGSTOP. On {@code COMMIT} it commits and prints
 * {@code COMMIT_OK} or {@code COMMIT_FAILED <sqlstate>}. Ends on {@code EXIT} or when stdin closes.
 */
final class StalledWriterProcess {
  private StalledWriterProcess() {}

  static int run(Map<String, String> opts) throws Exception {
    try (Connection c = LockHolderProcess.dataSource(opts).getConnection()) {
      if (opts.containsKey("idleInTxMs")) {
        try (PreparedStatement ps = c.prepareStatement(
            "SELECT set_config('idle_in_transaction_session_timeout', ?, false)")) {
          ps.setString(1, opts.get("idleInTxMs"));
          ps.execute();
        }
      }
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement("SELECT pglock.check_fencing_token(?, ?, ?)")) {
        ps.setString(1, opts.get("namespace"));
        ps.setString(2, opts.get("name"));
        ps.setLong(3, Long.parseLong(opts.get("token")));
        ps.execute();
        LockHolderProcess.out("CHECKED");
      } catch (SQLException e) {
        LockHolderProcess.out("CHECK_REJECTED " + e.getSQLState());
      }
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null && !line.trim().equals("EXIT")) {
          if (line.trim().equals("COMMIT")) {
            try {
              c.commit();
              LockHolderProcess.out("COMMIT_OK");
            } catch (SQLException e) {
              LockHolderProcess.out("COMMIT_FAILED " + e.getSQLState());
            }
          }
        }
      }
    } catch (SQLException e) {
      LockHolderProcess.out("COMMIT_FAILED " + e.getSQLState()); // the connection's close after a terminate
    }
    return 0;
  }
}
