package io.pglock.cli;

import io.pglock.election.Leader;
import io.pglock.election.LeaderElection;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code pglock leader NAME}: who leads the leader election NAME now, read with
 * {@link LeaderElection#currentLeader(javax.sql.DataSource, String, String, String)} (the holder of the
 * lock {@code election:NAME} in the namespace, through the view {@code <schema>.locks}). Exit codes: 0
 * a leader shown, 1 no leader, 2 bad options, 3 database unreachable, 5 schema missing.
 */
@Command(name = "leader",
    mixinStandardHelpOptions = true,
    header = "Shows who leads a leader election now.",
    description = {
        "%nThe node that holds the election's lock (election:NAME in the namespace) now: its pglock node name, "
            + "the pid of its backend, its application_name, and since when (the start of the holding connection: "
            + "the earliest the leader can have been elected, by the server's clock; an age by this host's clock). "
            + "The term's fencing token is not in the server's lock table: the leader's own Term has it. Reads the "
            + "view <schema>.locks (PgLockSchema.migrate, schema version 6 or later).%n"},
    footerHeading = "%nExamples:%n",
    footer = {
        "  pglock leader billing-daemon --namespace billing",
        "  pglock leader billing-daemon --namespace billing || echo 'nobody leads'"},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:a leader is shown",
        "1:no leader: nobody holds the election's lock now (printed: no leader)",
        "2:bad options",
        "3:the database could not be reached",
        "5:pglock's schema (or its view locks) is missing: run PgLockSchema.migrate or the migration files",
        "6:the role lacks a privilege (CONNECT on the database, USAGE on the schema, or one on a table, view or function): the message names the GRANT to run"})
public final class LeaderCommand implements Callable<Integer> {
  /** How long the query may take, and connecting. */
  static final Duration QUERY_TIMEOUT = Duration.ofSeconds(10);

  @Spec
  private CommandSpec spec;

  @Mixin
  private DatabaseOptions database;

  @Mixin
  private NamespaceOption namespace;

  @Mixin
  private SchemaOption schema;

  @Parameters(index = "0", paramLabel = "NAME", description = "The election's name, as given to LeaderElection.join.")
  private String name;

  @Override
  public Integer call() {
    if (name.isBlank()) {
      throw new ParameterException(spec.commandLine(), "NAME must not be blank");
    }
    String ns = namespace.namespace();
    namespace.key(LeaderElection.lockName(name)); // checks that the lock name is valid
    Optional<Leader> leader = LeaderElection.currentLeader(database.readingDataSource(QUERY_TIMEOUT), schema.schema(),
        ns, name);
    PrintWriter out = spec.commandLine().getOut();
    if (leader.isEmpty()) {
      out.println("no leader of election " + name + " in namespace " + ns);
      out.flush();
      return ExitCodes.NO_LEADER;
    }
    Leader l = leader.get();
    out.println("election  " + name + " (namespace " + ns + ")");
    out.println("node      " + l.node().orElse("-"));
    out.println("pid       " + l.pid());
    out.println("client    " + (l.applicationName().isEmpty() ? "-" : l.applicationName()));
    out.println("since     " + l.since().map(s -> s + " (" + Ages.format(Duration.between(s, Instant.now())) + " ago)")
        .orElse("-"));
    out.flush();
    return ExitCodes.OK;
  }
}
