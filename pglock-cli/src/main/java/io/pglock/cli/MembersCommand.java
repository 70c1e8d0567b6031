package io.pglock.cli;

import io.pglock.election.Member;
import io.pglock.election.Membership;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code pglock members GROUP}: the live members of the group GROUP now, read with
 * {@link Membership#members(javax.sql.DataSource, String, String, String)} (the holders of the locks
 * {@code member:GROUP:*} in the namespace, through the view {@code <schema>.locks}). Exit codes: 0
 * members shown, 1 no members, 2 bad options, 3 database unreachable, 5 schema missing.
 */
@Command(name = "members",
    mixinStandardHelpOptions = true,
    header = "Shows the live members of a group.",
    description = {
        "%nThe members that hold their lock (member:GROUP:ID in the namespace) now, sorted by id: the member's "
            + "id, its pglock node name, the pid of its backend, and since when (the start of the holding "
            + "connection: the earliest the member can have joined, by the server's clock; an age by this host's "
            + "clock). Reads the view <schema>.locks (PgLockSchema.migrate, schema version 6 or later).%n"},
    footerHeading = "%nExamples:%n",
    footer = {
        "  pglock members workers --namespace billing",
        "  pglock members workers --namespace billing || echo 'nobody in the group'"},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:members are shown",
        "1:no members: nobody holds a member lock of the group now (printed: no members)",
        "2:bad options",
        "3:the database could not be reached",
        "5:pglock's schema (or its view locks) is missing: run PgLockSchema.migrate or the migration files"})
public final class MembersCommand implements Callable<Integer> {
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

  @Parameters(index = "0", paramLabel = "GROUP", description = "The group's name, as given to Membership.join.")
  private String group;

  @Override
  public Integer call() {
    if (group.isBlank() || group.indexOf(':') >= 0) {
      throw new ParameterException(spec.commandLine(), "GROUP must not be blank or contain ':'");
    }
    String ns = namespace.namespace();
    namespace.key(Membership.lockName(group, "x")); // checks that the lock names can be valid
    List<Member> members = Membership.members(database.readingDataSource(QUERY_TIMEOUT), schema.schema(), ns, group);
    PrintWriter out = spec.commandLine().getOut();
    if (members.isEmpty()) {
      out.println("no members of group " + group + " in namespace " + ns);
      out.flush();
      return ExitCodes.NO_MEMBERS;
    }
    out.println("group " + group + " (namespace " + ns + "): " + members.size() + " member"
        + (members.size() == 1 ? "" : "s"));
    TextTable table = new TextTable(List.of("ID", "NODE", "PID", "SINCE"), 60, 60, 10, 60);
    Instant now = Instant.now();
    for (Member m : members) {
      table.add(List.of(m.id(), m.node().orElse("-"), Integer.toString(m.pid()),
          m.since().map(s -> s + " (" + Ages.format(Duration.between(s, now)) + " ago)").orElse("-")));
    }
    table.lines().forEach(out::println);
    out.flush();
    return ExitCodes.OK;
  }
}
