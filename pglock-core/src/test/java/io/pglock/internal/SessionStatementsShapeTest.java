package io.pglock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.LockKey;
import io.pglock.LockMode;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * Batches of up to {@link Sql#MAX_SHAPED} ops run as one row of function calls, prepared once per
 * shape and kept under a key computed from the ops. Two different shapes must never share a
 * statement.
 */
class SessionStatementsShapeTest {

  /**
   * Found by benchmark B6 (64 threads: lock sessions lost with "The column index is out of range: 5,
   * number of columns: 4"). The shape key is an int built as {@code shape * 16 + code}, starting
   * from the op count: for 8 ops that is 8 * 16^8 + ..., which overflows, so 8 ops [try, try, try,
   * unlock, a, b, c, d] get the key of 4 ops [a, b, c, d] (4 * 16^4) and run the 4-op statement.
   */
  @Test
  void anEightOpBatch_neverRunsTheStatementOfAFourOpBatch() throws Exception {
    long base = ThreadLocalRandom.current().nextLong(1L << 40, 1L << 60);
    try (Connection c = TestDatabase.get().connect()) {
      SessionStatements statements = new SessionStatements(BorrowedConnection.of(c), "pglock");
      List<Op> four = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        four.add(Op.tryLock(key(base + i), LockMode.EXCLUSIVE));
      }
      assertThat(statements.run(four)).containsExactly(1, 1, 1, 1);

      List<Op> eight = new ArrayList<>();
      for (int i = 10; i < 13; i++) {
        eight.add(Op.tryLock(key(base + i), LockMode.EXCLUSIVE));
      }
      eight.add(Op.unlock(key(base + 10), LockMode.EXCLUSIVE, null));
      for (int i = 20; i < 24; i++) {
        eight.add(Op.tryLock(key(base + i), LockMode.EXCLUSIVE));
      }
      assertThat(statements.run(eight)).as("8 ops, 8 answers").containsExactly(1, 1, 1, 1, 1, 1, 1, 1);
    }
  }

  private static ServerKey key(long k) {
    return ServerKey.of(LockKey.of(k));
  }
}
