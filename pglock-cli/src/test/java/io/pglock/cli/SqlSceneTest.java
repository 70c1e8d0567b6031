package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.LockKey;
import io.pglock.PgLockSchema;
import io.pglock.PgLocks;
import io.pglock.testing.TestDatabase;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Both ways the SQL scene names the key: the installed SQL function, and LockKey's numbers. */
class SqlSceneTest {
  private final DataSource ds = TestDatabase.get().dataSource();
  private final String namespace = "sqlscene-" + UUID.randomUUID().toString().substring(0, 8);
  private final StringWriter out = new StringWriter();
  private final Console console = new Console(new PrintWriter(out));
  private final DemoWorker worker = new DemoWorker("worker-1",
      PgLocks.builder(ds).namespace(namespace).nodeName("worker-1").build(),
      new ResourceLedger(List.of("invoice-7")), console, false);

  @AfterEach
  void closeWorker() {
    worker.close();
  }

  @Test
  void run_keyFunctionInstalled_locksThroughIt() throws Exception {
    PgLockSchema.migrate(ds, PgLockSchema.DEFAULT_SCHEMA);

    boolean ok = new SqlScene(ds, PgLockSchema.DEFAULT_SCHEMA, console).run(worker, "invoice-7");

    assertThat(ok).as(out.toString()).isTrue();
    assertThat(out.toString())
        .contains("runs SELECT pg_advisory_lock(pglock.key('" + namespace + "', 'invoice-7'))")
        .contains("tryAcquire() returned empty while SQL held the lock")
        .contains("the same tryAcquire() returned a handle");
  }

  @Test
  void run_noKeyFunction_locksLockKeysNumber() throws Exception {
    long key = LockKey.named(namespace, "invoice-7").int64();

    boolean ok = new SqlScene(ds, "pglock_cli_not_installed", console).run(worker, "invoice-7");

    assertThat(ok).as(out.toString()).isTrue();
    assertThat(out.toString())
        .contains("runs SELECT pg_advisory_lock(" + key + ") (the key of name:" + namespace + ":invoice-7 as LockKey "
            + "computes it; the SQL function pglock_cli_not_installed.key is not installed here)")
        .contains("tryAcquire() returned empty while SQL held the lock")
        .contains("the same tryAcquire() returned a handle");
  }
}
