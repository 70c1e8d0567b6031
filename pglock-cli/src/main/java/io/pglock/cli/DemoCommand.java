package io.pglock.cli;

import io.pglock.PgLockSchema;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code pglock demo}: a fleet of workers shares a list of resources through
 * {@link io.pglock.WorkDistributor} for a few rounds, printing per round what each worker
 * processed, found already done and skipped as busy (with {@code --verbose}, every take and
 * release), then checks from its own in-memory record that no resource was ever worked by two
 * workers at once and that every resource was processed in every round. Then two scenes: a
 * worker's lock session is terminated on the server and its handle signals the loss
 * ({@link LossScene}), and a lock taken from plain SQL keeps a worker out ({@link SqlScene}).
 *
 * <p>Without {@code --url} it starts an embedded PostgreSQL and stops it at the end. Exit codes
 * ({@link ExitCodes}): 0 when every check holds, 1 when one does not (or the run failed), 2 on bad
 * options, 3 when the database could not be reached (no connection, a refused login, an embedded
 * PostgreSQL that did not start).
 */
@Command(name = "demo",
    mixinStandardHelpOptions = true,
    header = "Runs a fleet of workers that share resources through advisory locks.",
    description = {
        "%nThe workers walk the resources for a few rounds and the demo checks that no resource was ever "
            + "worked by two workers at once and that every resource was processed in every round. Then it "
            + "terminates one worker's lock session on the server to show the loss being signalled, and takes "
            + "a lock from plain SQL to show that it keeps the Java workers out. Starts an embedded PostgreSQL "
            + "unless --url is given.%n"},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:every check held",
        "1:a check failed, or the run failed",
        "2:bad options",
        "3:the database could not be reached (no connection, login refused, or the embedded PostgreSQL "
            + "did not start)",
        "6:with --url: the role lacks a privilege (CONNECT on the database, or what installing the schema needs): "
            + "the message names the GRANT to run"})
public final class DemoCommand implements Callable<Integer> {
  static final int MAX_WORKERS = 32;
  static final int MAX_RESOURCES = 1_000;
  static final int MAX_ROUNDS = 100;

  @Spec
  private CommandSpec spec;

  @Option(names = "--url", paramLabel = "JDBC_URL",
      description = "PostgreSQL to use, e.g. jdbc:postgresql://127.0.0.1:5432/mydb (default: an embedded one).")
  private String url;

  @Option(names = "--user", description = "Database user (with --url).")
  private String user;

  @Option(names = "--password", description = "Database password (with --url).")
  private String password;

  @Option(names = "--connect-timeout", paramLabel = "DURATION", defaultValue = "10s",
      converter = DurationConverter.class,
      description = "How long to wait for the database to accept a connection and a login, 1s to 5m "
          + "(default: ${DEFAULT-VALUE}). Raise it for a loaded machine or a slow network.")
  private Duration connectTimeout;

  @Option(names = "--workers", paramLabel = "N", defaultValue = "4",
      description = "Workers, each with its own PgLocks, like separate processes (default: ${DEFAULT-VALUE}).")
  private int workers;

  @Option(names = "--resources", paramLabel = "N", defaultValue = "12",
      description = "Resources shared by the workers, named invoice-1 ... (default: ${DEFAULT-VALUE}).")
  private int resources;

  @Option(names = "--rounds", paramLabel = "N", defaultValue = "3",
      description = "Rounds; in each, every worker walks every resource once (default: ${DEFAULT-VALUE}).")
  private int rounds;

  @Option(names = {"-v", "--verbose"},
      description = "Print a line for every take and release, not only a tally per round.")
  private boolean verbose;

  @Override
  public Integer call() throws InterruptedException, SQLException {
    validate();
    Console console = new Console(spec.commandLine().getOut());
    List<String> names = IntStream.rangeClosed(1, resources).mapToObj(i -> "invoice-" + i).toList();
    String namespace = "demo-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()).substring(2);
    ResourceLedger ledger = new ResourceLedger(names);
    boolean ok;
    try (DemoDatabase db = url == null ? DemoDatabase.embedded(console)
        : DemoDatabase.server(url, user, password, connectTimeout, console)) {
      console.event("pglock demo on " + db.description() + ": " + count(workers, "worker") + ", "
          + count(resources, "resource") + ", " + count(rounds, "round") + ", lock namespace " + namespace);
      try (DemoFleet fleet = new DemoFleet(db.dataSource(), namespace, connectTimeout, workers, ledger, console,
          verbose)) {
        fleet.run(rounds);
        boolean roundsOk = new DemoSummary(fleet.workers(), ledger, rounds).print(console);
        List<DemoWorker> w = fleet.workers();
        DemoWorker other = w.get(Math.min(1, w.size() - 1));
        boolean lossOk = new LossScene(db.dataSource(), namespace, console).run(w.get(0), other, names.get(0));
        boolean sqlOk = new SqlScene(db.dataSource(), PgLockSchema.DEFAULT_SCHEMA, console)
            .run(w.get(0), names.get(names.size() - 1));
        ok = roundsOk && lossOk && sqlOk;
      }
    }
    console.plain("");
    console.plain(ok ? "result: every check held (exit code " + ExitCodes.OK + ")"
        : "result: a check FAILED, see above (exit code " + ExitCodes.CHECK_FAILED + ")");
    return ok ? ExitCodes.OK : ExitCodes.CHECK_FAILED;
  }

  private void validate() {
    check("--workers", workers, MAX_WORKERS);
    check("--resources", resources, MAX_RESOURCES);
    check("--rounds", rounds, MAX_ROUNDS);
    DatabaseOptions.checkConnectTimeout(spec, connectTimeout);
    if (url != null && !url.startsWith("jdbc:postgresql:")) {
      throw new ParameterException(spec.commandLine(),
          "--url must be a PostgreSQL JDBC URL such as jdbc:postgresql://127.0.0.1:5432/mydb: " + url);
    }
    if (url == null && (user != null || password != null)) {
      throw new ParameterException(spec.commandLine(), "--user and --password need --url");
    }
  }

  /** "1 round", "3 rounds". */
  static String count(int n, String noun) {
    return n + " " + noun + (n == 1 ? "" : "s");
  }

  private void check(String option, int value, int max) {
    if (value < 1 || value > max) {
      throw new ParameterException(spec.commandLine(),
          option + " must be between 1 and " + max + ": " + value);
    }
  }
}
