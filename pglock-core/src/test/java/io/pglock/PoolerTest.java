package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Through a real PgBouncer in transaction mode (installed by .ci/run), session locks are refused with
 * a message naming the fix, and transaction-scoped locks work.
 */
class PoolerTest extends PgLocksTestSupport {
  private static final Path PGBOUNCER = Path.of("/usr/sbin/pgbouncer");
  private static Process bouncer;
  private static int port;
  private static String dbName;

  @BeforeAll
  static void startPgBouncer() throws Exception {
    assumeTrue(Files.isExecutable(PGBOUNCER), "PgBouncer is not installed (.ci/run installs it)");
    Properties url = org.postgresql.Driver.parseURL(db().jdbcUrl(), null);
    dbName = url.getProperty("PGDBNAME");
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path dir = Files.createTempDirectory("pglock-pgbouncer");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path users = dir.resolve("users.txt");
    Files.writeString(users, "\"postgres\" \"\"\n");
    Path ini = dir.resolve("pgbouncer.ini");
    Files.writeString(ini, String.join("\n",
        "[databases]",
        dbName + " = host=" + url.getProperty("PGHOST") + " port=" + url.getProperty("PGPORT") + " dbname=" + dbName,
        "[pgbouncer]",
        "listen_addr = 127.0.0.1",
        "listen_port = " + port,
        "unix_socket_dir =",
        "auth_type = trust",
        "auth_file = " + users,
        "pool_mode = transaction",
        "default_pool_size = 2",
        "ignore_startup_parameters = extra_float_digits,application_name",
        "logfile = " + dir.resolve("pgbouncer.log"),
        ""));
    for (Path p : new Path[] {users, ini}) {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-rw-rw-"));
    }
    ProcessBuilder pb = new ProcessBuilder(PGBOUNCER.toString(), "-u", "postgres", ini.toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("stdout.txt").toFile());
    bouncer = pb.start();
    await("PgBouncer listens on " + port, Duration.ofSeconds(15), PoolerTest::listening);
  }

  @AfterAll
  static void stopPgBouncer() throws InterruptedException {
    if (bouncer != null) {
      bouncer.destroy();
      bouncer.waitFor();
    }
  }

  private static boolean listening() {
    try (Socket s = new Socket("127.0.0.1", port)) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static PGSimpleDataSource viaPgBouncer() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL("jdbc:postgresql://127.0.0.1:" + port + "/" + dbName + "?prepareThreshold=0");
    ds.setUser("postgres");
    return ds;
  }

  @Test
  void build_throughTransactionPooler_refusesSessionLocks_namingTheFix() {
    assertThatThrownBy(() -> PgLocks.builder(viaPgBouncer()).namespace("test").build())
        .isInstanceOf(UnsupportedDatabaseException.class)
        .hasMessageContaining("pooler in transaction mode")
        .hasMessageContaining("PgLocks.inTransaction")
        .hasMessageContaining("PgLocksBuilder.transactionLocksOnly()");
  }

  @Test
  void transactionLocksOnly_throughTransactionPooler_builds_andLocksExcludeSessionLocks() throws Exception {
    // the user's whole deployment goes through the pooler: nothing else reaches PostgreSQL
    PgLocks pooled = track(PgLocks.builder(viaPgBouncer()).namespace("test").transactionLocksOnly().build());
    assertThat(pooled.openSessions()).isZero();
    assertThatThrownBy(() -> pooled.lock("via-pooler-only")).isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("transactionLocksOnly()");
    PgLocks direct = newLocks();
    Connection admin = connect();
    try (Connection c = viaPgBouncer().getConnection()) {
      c.setAutoCommit(false);
      TransactionLocks tx = pooled.inTransaction(c);
      assertThat(tx.tryLock("via-pooler-only")).isTrue();
      tx.lock("via-pooler-only-2", Duration.ofSeconds(2));
      assertThat(serverHolders(admin, pooled.key("via-pooler-only"))).isEqualTo(1);
      assertThat(direct.lock("via-pooler-only").tryAcquire()).isEmpty();
      c.commit();
    }
    assertThat(serverHolders(admin, pooled.key("via-pooler-only"))).isZero();
    assertThat(serverHolders(admin, pooled.key("via-pooler-only-2"))).isZero();
  }

  @Test
  void transactionLocks_throughTransactionPooler_work() throws Exception {
    PgLocks locks = newLocks(); // session locks on a direct connection; transaction locks via the pooler
    Connection direct = connect();
    try (Connection pooled = viaPgBouncer().getConnection()) {
      pooled.setAutoCommit(false);
      assertThat(locks.inTransaction(pooled).tryLock("via-pooler")).isTrue();
      assertThat(serverHolders(direct, locks.key("via-pooler"))).isEqualTo(1);
      assertThat(locks.lock("via-pooler").tryAcquire()).isEmpty();
      pooled.commit();
    }
    assertThat(serverHolders(direct, locks.key("via-pooler"))).isZero();
  }
}
