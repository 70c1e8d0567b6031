package io.pglock.cli;

import io.pglock.election.Member;
import io.pglock.election.Membership;
import io.pglock.ownership.Ownership;
import io.pglock.ownership.ResourceOwner;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code pglock members GROUP}: the live members of the group GROUP now, read with
 * {@link Membership#members(javax.sql.DataSource, String, String, String)} (the holders of the locks
 * {@code member:GROUP:*} in the namespace, through the view {@code <schema>.locks}), with the
 * resources each owns if the group is an {@link Ownership} group ({@code own:GROUP:*}). Exit codes: 0
 * members shown, 1 no members, 2 bad options, 3 database unreachable, 5 schema missing.
 */
@Command(name = "members",
    mixinStandardHelpOptions = true,
    header = "Shows the live members of a group.",
    description = {
        "%nThe members that hold their lock (member:GROUP:ID in the namespace) now, sorted by id: the member's "
            + "id, its pglock node name, the pid of its backend, and since when (the start of the holding "
            + "connection: the earliest the member can have joined, by the server's clock; an age by this host's "
            + "clock). For a fair-share ownership group, OWNS counts and names the resources each member owns "
            + "(the holders of own:GROUP:RESOURCE held from the member's node); --owned lists every owned resource "
            + "with its owner. Reads the view <schema>.locks (PgLockSchema.migrate, schema version 6 or later).%n"},
    footerHeading = "%nExamples:%n",
    footer = {
        "  pglock members workers --namespace billing",
        "  pglock members shards --namespace billing --owned",
        "  pglock members workers --namespace billing || echo 'nobody in the group'"},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:members are shown",
        "1:no members: nobody holds a member lock of the group now (printed: no members)",
        "2:bad options",
        "3:the database could not be reached",
        "5:pglock's schema (or its view locks) is missing: run PgLockSchema.migrate or the migration files",
        "6:the role lacks a privilege (CONNECT on the database, USAGE on the schema, or one on a table, view or function): the message names the GRANT to run"})
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

  @Parameters(index = "0", paramLabel = "GROUP",
      description = "The group's name, as given to Membership.join or Ownership.join.")
  private String group;

  @Option(names = "--owned", description = "Also list every owned resource of the group: resource, member, pid.")
  private boolean listOwned;

  /** How many names of owned resources fit the OWNS column before it ends with "...". */
  private static final int OWNS_WIDTH = 60;

  @Override
  public Integer call() {
    if (group.isBlank() || group.indexOf(':') >= 0) {
      throw new ParameterException(spec.commandLine(), "GROUP must not be blank or contain ':'");
    }
    String ns = namespace.namespace();
    namespace.key(Membership.lockName(group, "x")); // checks that the lock names can be valid
    DataSource source = database.readingDataSource(QUERY_TIMEOUT);
    List<Member> members = Membership.members(source, schema.schema(), ns, group);
    List<ResourceOwner> owners = members.isEmpty() ? List.of() : Ownership.owners(source, schema.schema(), ns, group);
    PrintWriter out = spec.commandLine().getOut();
    if (members.isEmpty()) {
      out.println("no members of group " + group + " in namespace " + ns);
      out.flush();
      return ExitCodes.NO_MEMBERS;
    }
    out.println("group " + group + " (namespace " + ns + "): " + members.size() + " member"
        + (members.size() == 1 ? "" : "s"));
    Map<String, List<String>> ownedByNode = new TreeMap<>();
    for (ResourceOwner o : owners) {
      o.node().ifPresent(n -> ownedByNode.computeIfAbsent(n, k -> new ArrayList<>()).add(o.resource()));
    }
    boolean ownership = !owners.isEmpty();
    List<String> headers = new ArrayList<>(List.of("ID", "NODE", "PID", "SINCE"));
    if (ownership) {
      headers.add("OWNS");
    }
    TextTable table = ownership ? new TextTable(headers, 60, 60, 10, 60, OWNS_WIDTH + 10)
        : new TextTable(headers, 60, 60, 10, 60);
    Instant now = Instant.now();
    Map<String, String> memberOfNode = new TreeMap<>();
    for (Member m : members) {
      List<String> row = new ArrayList<>(List.of(m.id(), m.node().orElse("-"), Integer.toString(m.pid()),
          m.since().map(s -> s + " (" + Ages.format(Duration.between(s, now)) + " ago)").orElse("-")));
      if (ownership) {
        List<String> owned = m.node().map(n -> ownedByNode.getOrDefault(n, List.of())).orElse(List.of());
        row.add(owns(owned));
      }
      m.node().ifPresent(n -> memberOfNode.put(n, m.id()));
      table.add(row);
    }
    table.lines().forEach(out::println);
    if (ownership) {
      out.println(owners.size() + " resource" + (owners.size() == 1 ? "" : "s") + " owned");
    }
    if (listOwned && ownership) {
      out.println();
      TextTable resources = new TextTable(List.of("RESOURCE", "MEMBER", "PID"), 60, 60, 10);
      for (ResourceOwner o : owners) {
        resources.add(List.of(o.resource(), o.node().map(memberOfNode::get).orElse("(not a member)"),
            Integer.toString(o.pid())));
      }
      resources.lines().forEach(out::println);
    }
    out.flush();
    return ExitCodes.OK;
  }

  /** {@code "3: r0 r4 r7"}, cut with "..." to fit the column. */
  private static String owns(List<String> owned) {
    StringBuilder sb = new StringBuilder().append(owned.size());
    if (!owned.isEmpty()) {
      sb.append(':');
    }
    for (String r : owned) {
      if (sb.length() + 1 + r.length() > OWNS_WIDTH) {
        return sb.append(" ...").toString();
      }
      sb.append(' ').append(r);
    }
    return sb.toString();
  }
}
