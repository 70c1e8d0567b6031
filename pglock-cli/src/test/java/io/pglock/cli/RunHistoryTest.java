package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.TestDatabase;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code pglock run --history}: a run that fails shows in {@code pglock history --failed}, one that
 * succeeds as released. Before, {@code run} had no such option (exit 2) and no run was recorded.
 */
@ExtendWith(NoLeakedLocks.class)
class RunHistoryTest {
  private static final String NAMESPACE = "cli-run-history";
  /** The history is written by a background thread of the PgLocks: a generous bound for a loaded machine. */
  private static final Duration RECORDED = Duration.ofSeconds(30);
  private final String prefix = "rh-" + UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  static void installSchema() {
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
  }

  @Test
  void aFailedRun_appearsInHistoryFailed_withItsStatus_andASucceededOneAsReleased() throws Exception {
    CliRun failed = CliRun.onDatabase("run", "--namespace", NAMESPACE, "--name", prefix + "-bad", "--history",
        "--", "sh", "-c", "exit 3");
    assertThat(failed.exitCode()).as(failed.describe()).isEqualTo(3);
    CliRun fine = CliRun.onDatabase("run", "--namespace", NAMESPACE, "--name", prefix + "-good", "--history",
        "--", "true");
    assertThat(fine.exitCode()).as(fine.describe()).isZero();

    CliRun history = CliRun.awaitOnDatabase(RECORDED, r -> r.out().contains(prefix + "-bad"),
        "history", "--failed", "--namespace", NAMESPACE, "--name", prefix + "-*");
    String row = history.out().lines().filter(l -> l.contains(prefix + "-bad")).findFirst().orElseThrow();
    assertThat(row).as(history.describe()).contains("failed").contains("CommandFailedException: sh exited with status 3");
    assertThat(history.out()).doesNotContain(prefix + "-good");

    CliRun all = CliRun.awaitOnDatabase(RECORDED, r -> r.out().contains(prefix + "-good"),
        "history", "--namespace", NAMESPACE, "--name", prefix + "-good");
    assertThat(all.out().lines().filter(l -> l.contains(prefix + "-good")).findFirst().orElseThrow())
        .as(all.describe()).contains("released");
  }

  /** A process exits right after its run: the history must be written before it does (PgLocks.close drains). */
  @Test
  void aFailedRunInItsOwnProcess_isRecordedBeforeTheProcessExits() throws Exception {
    PglockProcess p = PglockProcess.start("run", "--namespace", NAMESPACE, "--name", prefix + "-proc", "--history",
        "--", "sh", "-c", "exit 5");
    assertThat(p.awaitExit(Duration.ofSeconds(60))).as(p.output()).isEqualTo(5);
    CliRun history = CliRun.awaitOnDatabase(RECORDED, r -> r.out().contains(prefix + "-proc"),
        "history", "--failed", "--namespace", NAMESPACE, "--name", prefix + "-proc");
    assertThat(history.out()).as(history.describe()).contains("CommandFailedException: sh exited with status 5");
  }

  @Test
  void history_withTheLockHeldElsewhere_nonblock_exitsWithTheConflictCode() throws Exception {
    try (java.sql.Connection c = TestDatabase.get().connect();
        java.sql.PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_lock(?)")) {
      ps.setLong(1, io.pglock.LockKey.named(NAMESPACE, prefix + "-held").int64());
      ps.execute();
      CliRun run = CliRun.onDatabase("run", "--namespace", NAMESPACE, "--name", prefix + "-held", "--history", "-n",
          "-E", "75", "--", "true");
      assertThat(run.exitCode()).as(run.describe()).isEqualTo(75);
      assertThat(run.err()).contains("is held by another holder; not obtained (tried once); exit code 75");
    }
  }
}
