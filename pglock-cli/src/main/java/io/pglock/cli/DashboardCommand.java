package io.pglock.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.pglock.SchemaMissingException;
import io.pglock.dashboard.Dashboard;
import io.pglock.dashboard.DashboardServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code pglock dashboard}: serves the web dashboard ({@link Dashboard}) for one database until
 * stopped (Ctrl-C, SIGTERM). Bound to 127.0.0.1 unless told otherwise; the standalone server has
 * no login, so on any other address it refuses to start unless {@code --read-only}, or
 * {@code --allow-remote-actions} says the network in front of it does the guarding. Exit codes:
 * those of the stopping signal (130, 143), 2 bad options or the port taken, 3 database unreachable, 5 schema older than version
 * 12, 6 a privilege missing.
 */
@Command(name = "dashboard",
    mixinStandardHelpOptions = true,
    header = "Serves the web dashboard: locks, history, elections, tasks, queues and jobs.",
    description = {
        "%nServes pglock's web dashboard for the database until stopped with Ctrl-C or SIGTERM, and prints its "
            + "URL. Pages: overview, locks held and awaited (who blocks whom), lock history, elections and "
            + "ownership, tasks (trigger, pause, resume), queues, jobs (filter by queue, state, kind, time and "
            + "payload; retry, discard, cancel, delete, one or in bulk), and the record of actions taken. Every "
            + "action is recorded in <schema>.dashboard_action. Needs schema version 12 (PgLockSchema.migrate).%n",
        "Bound to 127.0.0.1: only this machine reaches it. The standalone server has no login: on another "
            + "address, give --read-only, or --allow-remote-actions if the network in front of it guards it.%n"},
    footerHeading = "%nExamples:%n",
    footer = {
        "  pglock dashboard --url jdbc:postgresql://db:5432/app",
        "  pglock dashboard --port 9000 --read-only",
        "  ssh -L 8080:127.0.0.1:8080 ops-host   # then open http://localhost:8080/ here"},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "130, 143:stopped by Ctrl-C (SIGINT) or SIGTERM, after closing the server",
        "2:bad options, or the address cannot be bound (port taken)",
        "3:the database could not be reached",
        "5:pglock's schema is missing or older than version 12: run PgLockSchema.migrate",
        "6:the role lacks a privilege on pglock's schema: the message names the GRANT to run"})
public final class DashboardCommand implements Callable<Integer> {
  /** Each statement of a page, and the wait for a pooled connection. */
  static final Duration QUERY_TIMEOUT = Duration.ofSeconds(10);

  @Spec
  private CommandSpec spec;

  @Mixin
  private DatabaseOptions database;

  @Mixin
  private SchemaOption schema;

  @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
      description = "The address to listen on (default: ${DEFAULT-VALUE}, this machine only).")
  private String bind;

  @Option(names = "--port", paramLabel = "PORT", defaultValue = "8080",
      description = "The port to listen on, 0 for any free one (default: ${DEFAULT-VALUE}).")
  private int port;

  @Option(names = "--read-only", description = "Show everything, take no action: no buttons, every POST refused.")
  private boolean readOnly;

  @Option(names = "--allow-remote-actions",
      description = "Allow actions on an address other than loopback, where anyone who reaches the port can take them.")
  private boolean allowRemoteActions;

  @Option(names = "--refresh", paramLabel = "DURATION", defaultValue = "3s", converter = DurationConverter.class,
      description = "How often open pages refresh their live parts, 0 for never (default: ${DEFAULT-VALUE}).")
  private Duration refresh;

  @Override
  public Integer call() throws Exception {
    InetAddress address = address();
    if (!address.isLoopbackAddress() && !readOnly && !allowRemoteActions) {
      throw new ParameterException(spec.commandLine(), "--bind " + bind + " is not loopback, and the standalone"
          + " dashboard has no login: add --read-only, or --allow-remote-actions if the network guards it");
    }
    if (port < 0 || port > 65_535) {
      throw new ParameterException(spec.commandLine(), "--port must be from 0 to 65535: " + port);
    }
    PGSimpleDataSource source = (PGSimpleDataSource) database.readingDataSource(QUERY_TIMEOUT);
    try (HikariDataSource pool = pool(source)) {
      checkSchema(pool, schema.schema());
      Dashboard dashboard = Dashboard.builder(pool).schema(schema.schema()).readOnly(readOnly).refresh(refresh)
          .queryTimeout(QUERY_TIMEOUT).build();
      DashboardServer server;
      try {
        server = dashboard.serve(new InetSocketAddress(address, port));
      } catch (IOException e) {
        throw new ParameterException(spec.commandLine(), "cannot listen on " + bind + ":" + port + ": " + e.getMessage()
            + " (another program has the port? choose one with --port)");
      }
      CountDownLatch stopped = new CountDownLatch(1);
      Thread hook = new Thread(() -> {
        server.close();
        stopped.countDown();
      }, "pglock-dashboard-stop");
      Runtime.getRuntime().addShutdownHook(hook);
      PrintWriter out = spec.commandLine().getOut();
      out.println("pglock dashboard on " + server.uri() + (readOnly ? " (read-only)" : "") + " for "
          + database.shownUrl() + ", schema " + schema.schema() + "; Ctrl-C stops it");
      out.flush();
      stopped.await();
      return ExitCodes.OK;
    }
  }

  private InetAddress address() {
    try {
      return InetAddress.getByName(bind);
    } catch (UnknownHostException e) {
      throw new ParameterException(spec.commandLine(), "--bind " + bind + " is not an address of this machine");
    }
  }

  /** A pool of at most 4 connections, one per server thread, named so that operators can tell them apart. */
  private HikariDataSource pool(PGSimpleDataSource source) {
    source.setApplicationName("pglock-dashboard");
    HikariConfig config = new HikariConfig();
    config.setDataSource(source);
    config.setPoolName("pglock-dashboard");
    config.setMaximumPoolSize(4);
    config.setMinimumIdle(1);
    config.setConnectionTimeout(database.connectTimeout().toMillis() + 5_000);
    config.setInitializationFailTimeout(-1); // the check below reports an unreachable database clearly
    return new HikariDataSource(config);
  }

  /** The dashboard needs schema version 12: say so at start rather than on the first page. */
  private static void checkSchema(DataSource dataSource, String schema) throws SQLException {
    try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
      s.execute("SELECT 1 FROM " + schema + ".dashboard_action LIMIT 0");
    } catch (SQLException e) {
      if ("42P01".equals(e.getSQLState()) || "3F000".equals(e.getSQLState())) {
        throw new SchemaMissingException("pglock's schema " + schema + " is missing or older than version 12 (no "
            + schema + ".dashboard_action): run PgLockSchema.migrate, or the migration files up to V12");
      }
      throw e;
    }
  }
}
